"""``WarpedGP``: a component GP on learned, monotonely warped outputs.

``ComponentGP(kernel, warp="sinh-arcsinh")`` regresses

    y = w(u; ψ) = sinh(δ arcsinh((u - c) / s) - log κ)

of the standardised outputs ``u`` with the built-in GP, the warp's log-slope in
the likelihood (:mod:`~pp_decomp.components.gp.warped_density`; Snelson,
Rasmussen & Ghahramani 2004; the sinh-arcsinh family of Jones & Pewsey 2009,
after an affine map as in the compositional warps of Rios & Tobar 2019).
``ψ = (κ, δ, c, s)``: the skew ``κ`` (``κ > 1`` pulls a right tail in), the
tails ``δ`` (``δ < 1`` pulls both in), and where and at what scale the warp
bends, ``c`` and ``s``; with ``c`` below the data, ``w`` is close to ``log(u -
c)``, the warp of a positive rate. Their priors are centred on the identity
(``κ = δ = s = 1``, ``c = 0``), and they are inferred with the other
hyperparameters by MAP or NUTS; each draw conditions the GP on its own warped
data.

Predictions are of ``u``'s units (``y``'s, or ``log y``'s under
``transform="log"``): :meth:`WarpedGP.quantiles` maps each draw's Gaussian
quantiles back exactly through the monotone warp and mixes the draws by
bisection on the mixture's CDF; :meth:`WarpedGP.predict` gives the mean and
variance by Gauss-Hermite quadrature per draw; :meth:`WarpedGP.sample` warps
each sample back with its own draw's warp; :meth:`WarpedGP.loo_data` gives
PSIS-LOO each draw's log-slope, so ``elpd_loo`` is in ``y``'s units and compares
with an unwarped fit's. In an optimisation loop the component's samples are drawn
on the warped scale (:meth:`WarpedGP.latent_per_draw`) and mapped to ``y`` by their
own draw's warp (:meth:`WarpedGP.from_latent`), so it enters ``g`` by Monte Carlo.

Example
-------
>>> import numpy as np
>>> import pp_decomp as ppd
>>> rng = np.random.default_rng(0)
>>> X = rng.uniform(size=(30, 1))
>>> y = np.exp(np.sin(6 * X[:, 0]) + 0.1 * rng.standard_normal(30))
>>> gp = ppd.ComponentGP("matern52", warp="sinh-arcsinh").fit(X, y, seed=1)
>>> gp.hyper_names()[-4:]
['warp_skew', 'warp_tail', 'warp_loc', 'warp_scale']
>>> lo, hi = gp.quantiles(X[:3], [0.025, 0.975])
>>> bool(np.all(lo < hi))
True
"""

from __future__ import annotations

from functools import cached_property, partial

import numpy as np
from scipy.special import ndtr, ndtri

from pp_decomp.choices import OUTPUT_WARPS
from pp_decomp.components.criticism import LooData, marginal_loo_data
from pp_decomp.components.gp.gp import ComponentGP, general
from pp_decomp.components.gp.pymc_model import ComponentModel, JitteredCenter
from pp_decomp.components.gp.scaling import gradients_in_units
from pp_decomp.components.gp.warped_density import (
    N_WARP,
    warped_log_densities,
    warped_log_density,
    warped_logp,
)
from pp_decomp.components.inference.compiled import compiled, penalty
from pp_decomp.components.inference.map_objective import map_problem
from pp_decomp.components.inference.native import NutsModel, _check_xy, _Expand
from pp_decomp.components.output_warps import (
    sinh_arcsinh,
    sinh_arcsinh_inverse,
    sinh_arcsinh_log_slope,
)
from pp_decomp.components.posterior.batched import JITTER, GPPosterior
from pp_decomp.components.posterior.draws import HyperDraws
from pp_decomp.components.posterior.incremental import log_likelihood
from pp_decomp.kernels import DEFAULT_KERNEL, kernel_matrix
from pp_decomp.prior import Prior, as_prior
from pp_decomp.validate import as_generator, check_probabilities

WARP_NAMES = ("warp_skew", "warp_tail", "warp_loc", "warp_scale")
WARP_PRIORS = {
    "skew": Prior("LogNormal", mu=0.0, sigma=0.5),
    "tail": Prior("LogNormal", mu=0.0, sigma=0.5),
    "loc": Prior("Normal", mu=0.0, sigma=1.0),
    "scale": Prior("LogNormal", mu=0.0, sigma=1.0),
}
# the MAP search's box of (log κ, log δ, c, log s): a tail δ of e^-3 already maps
# v = 3 to 1.1, and c within 5 standard deviations of the outputs' mean
WARP_BOX = [(-3.0, 3.0), (-3.0, 3.0), (-5.0, 5.0), (-3.0, 3.0)]
HERMITE = np.polynomial.hermite_e.hermegauss(64)  # E f(Z), Z ~ N(0, 1), by 64 nodes


def _warp_prior(prior, what: str, name: str) -> Prior:
    real = what == "loc"
    default = WARP_PRIORS[what]
    prior = default if prior is None else as_prior(prior, f"component {name!r}: {what}")
    if not (prior.is_native and prior.positive != real):
        kind = "a real prior (Normal)" if real else "a positive prior (LogNormal, Gamma, ...)"
        raise ValueError(
            f"component {name!r}: {what} must be {kind} of a family the density evaluates "
            f"natively; got {prior!r}"
        )
    return prior


def warp_arguments(draws: HyperDraws, idx=slice(None), ndim: int = 1) -> tuple:
    """``(ε, δ, c, s)`` of the draws ``idx`` (a slice, or an index array of any shape),
    each shaped as ``idx`` picks them (``(S',)``, or ``idx.shape``) plus ``ndim`` axes of
    length 1 to broadcast against."""
    values = (np.log(draws.warp_skew), draws.warp_tail, draws.warp_loc, draws.warp_scale)
    picked = [np.asarray(v)[idx] for v in values]
    return tuple(p.reshape(p.shape + (1,) * ndim) for p in picked)


def warp_forward(u, eps, tail, loc, scale):
    """``w(u) = sinh(δ arcsinh((u - c) / s) - ε)``, broadcast over the arguments."""
    return sinh_arcsinh((u - loc) / scale, eps, tail)


def warp_inverse(y, eps, tail, loc, scale):
    """``w⁻¹(y) = c + s sinh((arcsinh(y) + ε) / δ)``, broadcast over the arguments."""
    return loc + scale * sinh_arcsinh_inverse(y, eps, tail)


def warped_data(u: np.ndarray, draws: HyperDraws) -> tuple[np.ndarray, np.ndarray]:
    """Each draw's warped outputs ``w_s(u)`` of the standardised ``u (n,)`` and the
    warp's log-slopes ``log w_s'(u) = log δ_s + log cosh a - ½ log(1 + v²) - log s_s``
    (``v = (u - c_s) / s_s``): (S, n) each."""
    eps, tail, loc, scale = warp_arguments(draws)
    v = (u[None, :] - loc) / scale
    return sinh_arcsinh(v, eps, tail), sinh_arcsinh_log_slope(v, eps, tail) - np.log(scale)


def latent_observations(gp, u: np.ndarray, draws: HyperDraws):
    """What ``gp``'s draws regress given its standardised outputs ``u`` (n,), with the
    Jacobian from ``u`` to them: a warped GP's :func:`warped_data`, (S, n) each; any
    other GP's ``u`` itself and ``None``."""
    return warped_data(u, draws) if isinstance(gp, WarpedGP) else (u, None)


def draw_log_likelihood(gp, Xs: np.ndarray, u: np.ndarray, draws: HyperDraws) -> np.ndarray:
    """``log p(u | θ_s, ψ_s)`` of every draw on scaled ``Xs (n, d)`` and standardised
    ``u (n,)``, the marginal likelihood on its own scale (a warped GP's on its warped
    outputs, plus the warp's log-slopes): (S,), ``-inf`` where it is not finite."""
    Y, slope = latent_observations(gp, u, draws)
    out = log_likelihood(gp.posterior_kernel, Xs, Y, draws, gp.mean_var)
    if slope is not None:
        out = out + slope.sum(axis=1)
    return np.where(np.isfinite(out), out, -np.inf)


def simulate(
    X, rng: np.random.Generator, *, skew: float, tail: float, noise: float, ls: float = 0.3
) -> np.ndarray:
    """Outputs of a warped GP with a known warp, ``y = w⁻¹(f(X) + ε)``: ``f`` a draw of a
    unit-amplitude Matérn 5/2 GP with lengthscale ``ls`` at the rows of ``X (n, d)``,
    ``ε ~ N(0, noise²)``, ``w⁻¹(z) = sinh((arcsinh(z) + log skew) / tail)``: (n,).

    On ``y``'s standardised ``u = (y - ȳ) / s_y`` the warp is :class:`WarpedGP`'s with
    ``κ = skew``, ``δ = tail``, ``c = -ȳ / s_y`` and ``s = 1 / s_y`` (the checks of
    ``benchmarks/studies/warped_recovery.py`` and the tests)."""
    X = np.asarray(X, dtype=float)
    n, d = X.shape
    K = kernel_matrix("matern52", X, X, np.full((1, d), float(ls)), np.ones(1))[0]
    f = np.linalg.cholesky(K + 1e-8 * np.eye(n)) @ rng.standard_normal(n)
    return sinh_arcsinh_inverse(f + noise * rng.standard_normal(n), np.log(skew), tail)


class WarpedGP(ComponentGP):
    """``ComponentGP`` with a learned sinh-arcsinh output warp (see the module
    docstring); made by ``ComponentGP(kernel, warp="sinh-arcsinh", skew=, tail=,
    loc=, scale=)``, the last four the priors of ``κ``, ``δ``, ``c`` and ``s``
    (default ``LogNormal(0, 0.5)``, ``LogNormal(0, 0.5)``, ``Normal(0, 1)``,
    ``LogNormal(0, 1)``: the bend's scale relative to the outputs' standard
    deviation, which heavy tails inflate by an order of magnitude)."""

    @staticmethod
    def takes(kernel, priors, noise, build, warp) -> bool:
        """Whether ``ComponentGP(..., warp=)`` is a ``WarpedGP``: a warp is given."""
        return warp is not None

    def __init__(
        self,
        kernel=DEFAULT_KERNEL,
        input_dim=None,
        *,
        warp: str = "sinh-arcsinh",
        skew: Prior | None = None,
        tail: Prior | None = None,
        loc: Prior | None = None,
        scale: Prior | None = None,
        build=None,
        **kwargs,
    ):
        name = str(kwargs.get("name", "f"))
        if build is not None:
            raise ValueError(
                f"component {name!r}: warp={warp!r} takes the built-in kernels, not a "
                f"from_pymc model; got build={build!r}"
            )
        if warp not in OUTPUT_WARPS:
            raise ValueError(
                f"component {name!r}: warp must be one of {OUTPUT_WARPS}; got {warp!r}"
            )
        if general(kernel, kwargs.get("priors"), kwargs.get("noise")):
            raise ValueError(
                f"component {name!r}: warp={warp!r} takes the built-in kernels "
                f"('se', 'matern52', 'matern32', 'rq' with the built-in priors); got {kernel!r}"
            )
        transform, standardize = kwargs.get("transform", "standardize"), kwargs.get("standardize")
        if transform is None or standardize is False:
            raise ValueError(
                f"component {name!r}: warp={warp!r} acts on standardised outputs; "
                f"got transform={transform!r}, standardize={standardize!r}"
            )
        given = {"skew": skew, "tail": tail, "loc": loc, "scale": scale}
        self.warp = warp
        self.warp_priors = {k: _warp_prior(p, k, name) for k, p in given.items()}
        super().__init__(kernel, input_dim, **kwargs)
        self.template = {**self.template, "warp": warp, **given}

    @property
    def warp_prm(self) -> np.ndarray:
        """The encoded priors of ``κ``, ``δ``, ``c`` and ``s``: (4, 3)."""
        return np.array([p.encoded() for p in self.warp_priors.values()])

    def hyper_names(self) -> list[str]:
        return [*super().hyper_names(), *WARP_NAMES]

    def _compiled(self):
        base = super()._compiled()
        prm = self.warp_prm
        key = ("warped", self.warp, base.kernel, base.input_dim, base.priors, prm.tobytes())
        return compiled(key, lambda: WarpedModel(base, prm))

    def _check_draws(self, draws: HyperDraws) -> None:
        super()._check_draws(draws)
        if any(getattr(draws, n) is None for n in WARP_NAMES):
            raise ValueError(f"draws of a warped component need {WARP_NAMES}; got {draws!r}")

    def sample_prior(self, S: int, rng: np.random.Generator) -> HyperDraws:
        """``S`` independent draws of the hyperparameters and the warp from their priors."""
        draws = super().sample_prior(S, rng)
        return _with_warp(draws, self._warp_draws(S, rng))

    def _warp_draws(self, S: int, rng: np.random.Generator) -> np.ndarray:
        """``(log κ, log δ, c, log s)`` drawn from their priors: (S, 4)."""
        import pymc as pm

        values = [
            pm.draw(p.to_pymc_dist(), draws=S, random_seed=rng) for p in self.warp_priors.values()
        ]
        out = np.column_stack(values).astype(float)
        out[:, [0, 1, 3]] = np.log(out[:, [0, 1, 3]])
        return out

    def _unconstrained(self, init: HyperDraws, cm) -> np.ndarray:
        names = [n for n in self.hyper_names() if n != "warp_loc"]
        parts = {f"{n}_log__": np.log(getattr(init, n)) for n in names}
        return cm.flatten_rows({**parts, "warp_loc": init.warp_loc})

    def _map_problem(self, Xs, ys, restarts, rng, init):
        _, starts, bounds, to_draws = map_problem(self, Xs, ys, restarts, rng, None)
        k = len(bounds)
        cm = self._compiled()
        if init is None:  # the priors' centre and the identity warp
            first = np.r_[starts[0], np.zeros(N_WARP)]
        else:  # init's mean in z
            first = self._unconstrained(init, cm).mean(0)
        drawn = self._warp_draws(len(starts) - 1, rng)
        starts = [first] + [np.r_[s, w] for s, w in zip(starts[1:], drawn, strict=True)]
        objective = WarpedMapObjective(cm, Xs, ys)

        def warped_draws(z):
            return _with_warp(to_draws(z[:k]), z[None, k:])

        return objective, starts, [*bounds, *WARP_BOX], warped_draws

    def _make_posterior(self, Xs, ys, draws: HyperDraws) -> GPPosterior:
        Y = warp_forward(ys[None, :], *warp_arguments(draws))
        return GPPosterior(self.kernel, Xs, Y, draws, JITTER, self.mean_var)

    def loo_data(self) -> LooData | None:
        """:func:`~pp_decomp.components.criticism.criticise`'s factors, with each draw's
        warped data and its Jacobian ``log w_s'(u_i) - log s_y`` (``- log y_i`` more
        under ``transform="log"``), so that ``elpd_loo`` is in ``y``'s units and
        compares with an unwarped model's."""
        data = marginal_loo_data(self)
        if data is None:
            return None
        _, slope = warped_data((self.y_train - self.y_mean) / self.y_std, self.draws)
        return data._replace(log_jacobian=slope + data.log_jacobian)

    # -------------------------------------------------------------- prediction
    def _latent(self, Xnew, pred_noise: bool):
        mean, var = self.posterior.per_draw(self._Xnew(Xnew))
        if pred_noise:
            var = var + self.posterior.noise_var[:, None]
        return mean, np.sqrt(var)

    def quantiles(self, Xnew, q, pred_noise: bool = False) -> np.ndarray:
        """The ``q``-quantiles of the posterior predictive at ``Xnew (m, d)``, in ``y``'s
        units (``log y``'s under ``transform="log"``): (len(q), m).

        Each draw's quantile is ``w⁻¹(μ_s + σ_s Φ⁻¹(q))`` exactly; the mixture's lies
        between the draws' and is found by bisection on ``(1/S) Σ_s Φ((w(u) - μ_s) / σ_s)``.
        ``pred_noise`` adds the noise, which is Gaussian on the warped scale.
        """
        return self.mixture_quantiles(*self._latent(Xnew, pred_noise), q)

    def mixture_quantiles(self, mean, sd, q, idx=slice(None)) -> np.ndarray:
        """The ``q``-quantiles (len(q), m) in ``y``'s units of the equal mixture of the
        draws ``idx`` (default all), Gaussian ``N(mean_s, sd_s²)`` ``(S', m)`` on the
        warped scale (:meth:`quantiles`'s bisection)."""
        q = check_probabilities(q, "q")
        args = warp_arguments(self.draws, idx, ndim=2)
        z = ndtri(q)[None, :, None]
        each = warp_inverse(mean[:, None] + sd[:, None] * z, *args)  # (S, Q, m)
        lo, hi = each.min(0), each.max(0)
        for _ in range(60):
            mid = 0.5 * (lo + hi)
            cdf = ndtr((warp_forward(mid[None], *args) - mean[:, None]) / sd[:, None]).mean(0)
            below = cdf < q[:, None]
            lo, hi = np.where(below, mid, lo), np.where(below, hi, mid)
        return self.y_mean + self.y_std * 0.5 * (lo + hi)

    def predict(self, Xnew, pred_noise: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """Mixture posterior mean and variance at ``Xnew`` (m, d) in ``y``'s units, by
        Gauss-Hermite quadrature (64 nodes) of ``w⁻¹`` per draw: (m,) each."""
        return self.output_moments(*self._latent(Xnew, pred_noise))

    def output_moments(
        self, mean: np.ndarray, sd: np.ndarray, idx=slice(None)
    ) -> tuple[np.ndarray, np.ndarray]:
        """Mean and variance ``(m,)`` in ``y``'s units of the equal mixture over the draws
        ``idx`` (default all) of ``w_s⁻¹(N(mean_s, sd_s²))``, per-draw Gaussians on the
        warped scale ``(S', m)`` (:meth:`predict`'s quadrature)."""
        t, w = HERMITE
        w = w / w.sum()
        args = warp_arguments(self.draws, idx, ndim=2)
        u = warp_inverse(mean[..., None] + sd[..., None] * t, *args)
        u = self.y_mean + self.y_std * u  # (S, m, nodes)
        first = (u * w).sum(-1).mean(0)
        second = (u**2 * w).sum(-1).mean(0)
        return first, np.maximum(second - first**2, 0.0)

    def sample(self, Xnew, n_samples: int, seed=None, joint: bool = False, pred_noise=False):
        """Posterior samples at ``Xnew`` in ``y``'s units: (n_samples, m), each warped
        back by the warp of the draw it was sampled from."""
        z, s_idx = self.posterior.sample_with_draws(
            self._Xnew(Xnew), n_samples, as_generator(seed), joint, pred_noise
        )
        return self.from_latent(z, s_idx)

    # ------------------------------------------- the warped scale, where draws are Gaussian
    def latent_per_draw(self, Xnew, pred_noise: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """Per-draw means and variances ``(S, m)`` at ``Xnew (m, d)`` on the warped scale,
        where draw ``s`` is Gaussian and ``y = from_latent(z, s)``."""
        mean, sd = self._latent(Xnew, pred_noise)
        return mean, sd**2

    def latent_per_draw_grad(self, Xnew) -> tuple[np.ndarray, ...]:
        """:meth:`latent_per_draw` and its gradients in ``Xnew (m, d)``: (S, m), (S, m),
        (S, m, d), (S, m, d)."""
        moments = self.posterior.per_draw_grad(self._Xnew(Xnew))
        return gradients_in_units(moments, 0.0, 1.0, self.bounds)

    def latent_joint_per_draw(self, Xnew, idx=None) -> tuple[np.ndarray, np.ndarray]:
        """Per-draw joint means (S', m) and covariances (S', m, m) at ``Xnew`` on the
        warped scale, for the draws ``idx`` (default all)."""
        return self.posterior.joint_per_draw(self._Xnew(Xnew), idx)

    def from_latent(self, Z: np.ndarray, s: np.ndarray) -> np.ndarray:
        """Warped-scale values ``Z`` in ``y``'s units, ``ȳ + s_y w_s⁻¹(Z)``, entry by entry
        under the draws ``s`` (an index array of ``Z``'s leading shape)."""
        args = warp_arguments(self.draws, s, Z.ndim - np.ndim(s))
        return self.y_mean + self.y_std * warp_inverse(Z, *args)

    def from_latent_slope(self, Z: np.ndarray, s: np.ndarray) -> np.ndarray:
        """``∂ from_latent / ∂Z``: ``s_y s cosh((arcsinh Z + ε) / δ) / (δ √(1 + Z²))``."""
        eps, tail, _, scale = warp_arguments(self.draws, s, Z.ndim - np.ndim(s))
        inner = (np.arcsinh(Z) + eps) / tail
        return self.y_std * scale * np.cosh(inner) / (tail * np.hypot(1.0, Z))

    def predict_per_draw(self, Xnew, pred_noise: bool = False):
        raise NotImplementedError(self._latent_only)

    def joint_predict_per_draw(self, Xnew, idx=None):
        raise NotImplementedError(self._latent_only)

    def predict_per_draw_grad(self, Xnew):
        raise NotImplementedError(self._latent_only)

    @property
    def _latent_only(self) -> str:
        return (
            f"component {self.name!r}: a warped GP's per-draw Gaussian moments are on the "
            "warped scale; use predict, quantiles, sample or latent_per_draw"
        )

    def model_dict(self) -> dict:
        out = super().model_dict()
        t = self.template
        priors = {k: None if t[k] is None else p.to_dict() for k, p in self.warp_priors.items()}
        out["warp"] = {"family": self.warp, **priors}
        return out

    def __repr__(self) -> str:
        return super().__repr__().replace("ComponentGP(", f"WarpedGP({self.warp!r}, ", 1)


def _with_warp(draws: HyperDraws, W: np.ndarray) -> HyperDraws:
    """``draws`` with the warp's rows ``W (S, 4)``: ``(log κ, log δ, c, log s)``."""
    W = np.atleast_2d(W)
    skew, tail, loc, scale = (np.exp(W[:, q]) if q != 2 else W[:, q] for q in range(N_WARP))
    warp = dict(zip(WARP_NAMES, (skew, tail, loc, scale), strict=True))
    return HyperDraws(**{**draws.__dict__, **warp})


class WarpedMapObjective:
    """``z -> (-log p, -∇)`` of a warped component without the Jacobian, ``z = (log θ,
    log κ, log δ, c, log s)``
    (:func:`~pp_decomp.components.gp.warped_density.warped_log_density`)."""

    def __init__(self, model: WarpedModel, X, u):
        self.X = np.ascontiguousarray(X, dtype=float)
        self.u = np.ascontiguousarray(u, dtype=float)
        self.prm, self.warp = model.prm, model.warp

    def __call__(self, z) -> tuple[float, np.ndarray]:
        z = np.ascontiguousarray(z, dtype=float)
        value, grad = warped_log_density(z, self.X, self.u, self.prm, self.warp, False)
        if not np.isfinite(value):
            return penalty(z)
        return -value, -grad


def _chain_logp(X, y, *, prm, warp, k):
    return partial(warped_logp, X, y, prm, warp, np.zeros(k))


class _WarpExpand:
    """One chain's ``z -> {value names: z's parts, names: their values}`` in the order
    ``order``: the built-in coordinates and ``log κ``, ``log δ``, ``log s``
    exponentiated, ``c`` as it is (views of buffers of its own; nutpie copies them
    at once)."""

    def __init__(self, names, shapes, order):
        self.inner, self.order = _Expand(names, shapes), order
        at = names.index("warp_loc")
        self.at = int(sum(int(np.prod(s)) for s in shapes[:at]))

    def __call__(self, z: np.ndarray) -> dict:
        out = self.inner(z)
        loc = self.inner.z[self.at : self.at + 1].reshape(())
        return {n: loc if n == "warp_loc" else out[n] for n in self.order}


class WarpedModel(ComponentModel):
    """The NUTS model of a warped component structure: the built-in structure's
    coordinates, then ``log κ``, ``log δ``, ``c`` and ``log s``; ``y`` holds the
    standardised ``u``."""

    def __init__(self, base: ComponentModel, warp: np.ndarray):
        super().__init__(base.kernel, base.input_dim, base.priors)
        self.warp = np.ascontiguousarray(warp, dtype=float)
        self.label = f"warped {self.label}"

    @property
    def value_names(self) -> list[str]:
        warp = [n if n == "warp_loc" else f"{n}_log__" for n in WARP_NAMES]
        return [*super().value_names, *warp]

    @cached_property
    def nutpie_model(self):
        names = [n.removesuffix("_log__") for n in self.value_names]
        sizes = [self.input_dim] + [1] * (len(names) - 1)
        shapes = [(s,) if n == "ls" else () for n, s in zip(names, sizes, strict=True)]
        k = int(sum(sizes))
        center = np.r_[self.priors.log_center(self.kernel, self.input_dim), np.zeros(N_WARP)]
        natural = [(n, s) for n, s in zip(names, shapes, strict=True) if n != "warp_loc"]
        order = (*self.value_names, *[n for n, _ in natural])
        return NutsModel(
            ndim=k,
            make_logp=partial(_chain_logp, prm=self.prm, warp=self.warp, k=k),
            make_expand=partial(_WarpExpand, names, shapes, order),
            names=order,
            shapes=(*shapes, *[s for _, s in natural]),
            shared_data={"X": np.zeros((3, self.input_dim)), "y": np.zeros(3)},
            initial_point=JitteredCenter(center),
            check=_check_xy,
        )

    def log_posterior(self, Z: np.ndarray, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        Z = np.ascontiguousarray(Z, dtype=float)
        X, y = np.ascontiguousarray(X, dtype=float), np.ascontiguousarray(y, dtype=float)
        return warped_log_densities(Z, X, y, self.prm, self.warp)
