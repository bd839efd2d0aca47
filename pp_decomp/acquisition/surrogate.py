"""What acquisitions see: fitted GPs in the loop's maximisation convention.

The loop always maximises ``h = sign · f`` (``sign = -1`` when the problem
minimises), so every acquisition is written once, for maximisation.

Pending inputs
--------------
Pending inputs as hallucinated observations (GP-BUCB, Desautels et al. 2014).

While inputs ``P (k, d)`` are being evaluated, their outputs are unknown, but
observing them would shrink the posterior variance by an amount that does not
depend on the outputs. :class:`HallucinatedGP` is the posterior of a GP model
after observing ``P`` with outputs equal to its own posterior mean: for every
hyperparameter draw ``s`` the mean is unchanged and

* ``σ̃_s²(x) = σ_s²(x) - c_s(x)ᵀ (C_s + N_s)⁻¹ c_s(x)``
* ``K̃_s(X, X') = K_s(X, X') - K_s(X, P) (C_s + N_s)⁻¹ K_s(P, X')``

with ``C_s = K_s(P, P)`` the posterior covariance of the pending inputs,
``c_s(x) = K_s(P, x)`` and ``N_s`` their observation noise. A UCB rule then
turns away from inputs whose uncertainty the pending evaluations will remove,
which is how the UCB family builds a batch (and GP-UCB-PE's, Contal et al.
2013, upper-confidence part). The Monte Carlo acquisitions sample from the
hallucinated per-draw marginals; improvement-based ones also raise their
incumbent to the believed values at ``P`` (Kriging believer, Ginsbourger et
al. 2010).
"""

from __future__ import annotations

import copy
from collections.abc import Sequence

import numpy as np

from pp_decomp.acquisition.mc_gradient import samples_and_gradients
from pp_decomp.components import ComponentGP
from pp_decomp.components.correlated.view import shared_joint
from pp_decomp.components.posterior.batched import (
    joint_samples,
    mixture_moments,
    mixture_moments_grad,
)
from pp_decomp.composition import EntireGP
from pp_decomp.composition.core import (
    coupled_normals,
    draw_samples,
    linear_moments,
    linear_moments_grad,
    residual_correlation,
)
from pp_decomp.validate import as_generator, check_positive_int

# draws per component in an acquisition's screening (:func:`with_screen`): ranking
# 1024 random inputs to start local searches from needs the acquisition's shape,
# not its last digit; at 16 of 128 draws the screening costs an eighth
SCREEN_DRAWS = 16


def _thinned(model, k: int):
    thin = getattr(model, "thinned", None)
    return model if thin is None else thin(k)


def draw_moments(component, X: np.ndarray, grad: bool) -> tuple[np.ndarray, ...]:
    """``component``'s per-draw moments at ``X`` (with ``grad``, and their input
    gradients; ``NotImplementedError`` where it has none): a warped component's on
    its warped scale, where each draw is Gaussian (``latent_per_draw``)."""
    kind = "latent_per_draw" if warped(component) else "predict_per_draw"
    if not grad:
        return getattr(component, kind)(X)
    own = getattr(component, f"{kind}_grad", None)
    if own is None:
        raise NotImplementedError(f"{type(component).__name__} has no input gradient")
    return own(X)


def warped(component) -> bool:
    """Whether ``component`` is Gaussian on a warped scale of its own, its samples
    mapped to its outputs draw by draw (``from_latent``; a
    :class:`~pp_decomp.components.gp.warped.WarpedGP`)."""
    return hasattr(component, "from_latent")


def to_outputs(components: Sequence, F: np.ndarray, draw_idx: np.ndarray) -> np.ndarray:
    """``F (J, n, m)``, the components' samples under the draws ``draw_idx (n, J)``, with
    each warped component's mapped in place from its warped scale to its outputs by its
    draws' warps (:meth:`~pp_decomp.components.gp.warped.WarpedGP.from_latent`)."""
    for j, c in enumerate(components):
        if warped(c):
            F[j] = c.from_latent(F[j], draw_idx[:, j] % c.n_draws)
    return F


def with_screen(acq):
    """``acq`` with ``acq.screen``: the same acquisition on its model's components
    thinned to :data:`SCREEN_DRAWS` draws each; ``acq`` untouched where it has
    no surrogate ``model``, or no component has more draws or can be thinned
    (then it screens itself). An acquisition of acquisitions, named by its
    ``PARTS`` (:class:`~pp_decomp.acquisition.SmallerUCB`), screens on its parts'
    screens.

    A maximiser scores many random inputs with ``acq.screen`` to choose where
    its local searches start, which then use ``acq`` itself
    (:func:`~pp_decomp.optim.maximizers.maximize_box`).
    """
    screen = _screen_of(acq)
    if screen is not None:
        acq.screen = screen
    return acq


def _screen_of(acq):
    """``acq`` on thinned models, or ``None`` where nothing in it can be thinned."""
    parts = {name: getattr(acq, name) for name in getattr(acq, "PARTS", ())}
    if parts:
        screens = {name: _screen_of(part) for name, part in parts.items()}
        if all(s is None for s in screens.values()):
            return None
        screen = copy.copy(acq)
        for name, s in screens.items():
            setattr(screen, name, parts[name] if s is None else s)
    else:
        model = getattr(acq, "model", None)
        thin = _thinned(model, SCREEN_DRAWS)
        if thin is model:  # left as it is: any callable may be an acquisition
            return None
        screen = copy.copy(acq)
        screen.model = thin
    screen.screen = None
    return screen


class DecomposedSurrogate:
    """Component posteriors ``f_j`` and the signed composition ``h = sign · g(f; x)``.

    Parameters
    ----------
    components : sequence of fitted ComponentGP, one per component
    problem : pp_decomp.problem.Problem
    """

    correlation = None  # the copula's C (J, J); independent components have none

    def __init__(self, components: Sequence[ComponentGP], problem):
        self.components = list(components)
        self.problem = problem
        self.sign = problem.sign

    @property
    def linear(self):
        return self.problem.linear

    def moments(self, X) -> tuple[np.ndarray, np.ndarray]:
        """Mixture means and variances of every component: (m, J), (m, J)."""
        out = [c.predict(X) for c in self.components]
        return np.stack([m for m, _ in out], 1), np.stack([v for _, v in out], 1)

    def thinned(self, k: int) -> DecomposedSurrogate:
        """This surrogate with each component on at most ``k`` of its draws where it
        can be thinned (``thinned(k)``); itself when none is."""
        comps = [_thinned(c, k) for c in self.components]
        if all(a is b for a, b in zip(comps, self.components, strict=True)):
            return self
        return DecomposedSurrogate(comps, self.problem)

    def per_draw(self, X) -> list[tuple[np.ndarray, np.ndarray]]:
        """Per-draw means and variances of each component: J pairs of (S_j, m) arrays."""
        return [c.predict_per_draw(X) for c in self.components]

    def linear_per_draw(self, X) -> tuple[np.ndarray, np.ndarray]:
        """Mean and variance of ``h = sign · Σ_j g_j(x) f_j(x)`` per joint draw: (S, m) each
        (:func:`~pp_decomp.composition.core.linear_moments`, with the copula's
        ``correlation`` where there is one).

        Draw ``s`` of every component is one joint draw (the components are
        independent); components with fewer draws repeat theirs cyclically to
        ``S``, the most any component has. Needs a linear ``g``."""
        pairs = self.per_draw(X)
        S = max(m.shape[0] for m, _ in pairs)
        mean = np.stack([np.resize(m, (S, m.shape[1])) for m, _ in pairs], -1)  # (S, m, J)
        var = np.stack([np.resize(v, (S, v.shape[1])) for _, v in pairs], -1)
        G = self.sign * self.linear.weights(X)
        b = self.sign * self.linear.offset_at(X)
        return linear_moments(mean, var, G, b, self.correlation)

    def per_draw_grad(self, X) -> list[tuple[np.ndarray, ...]]:
        """:meth:`per_draw` and the gradients of each component's means and variances in
        ``X (m, d)``: J tuples of (S_j, m), (S_j, m), (S_j, m, d), (S_j, m, d).
        Raises ``NotImplementedError`` where a component has no input gradient."""
        return [draw_moments(c, X, grad=True) for c in self.components]

    def moments_grad(self, X) -> tuple[np.ndarray, ...]:
        """:meth:`moments` and their gradients in ``X (m, d)``: (m, J), (m, J), (m, J, d),
        (m, J, d): a component's own ``predict_grad`` where it mixes its draws with
        weights (the fast path's view), else
        :func:`~pp_decomp.components.posterior.batched.mixture_moments_grad` of its
        per-draw gradients. Raises ``NotImplementedError`` where a component has none."""
        parts = []
        for c in self.components:
            own = getattr(c, "predict_grad", None)
            per_draw = getattr(c, "predict_per_draw_grad", None)
            if own is None and per_draw is None:
                raise NotImplementedError(f"{type(c).__name__} has no input gradient")
            parts.append(own(X) if own is not None else mixture_moments_grad(*per_draw(X)))
        return tuple(np.stack([p[k] for p in parts], 1) for k in range(4))

    def normals(self, z: np.ndarray) -> np.ndarray:
        """The normals ``z (n, J)`` as the samples use them (coupled under a copula)."""
        return z

    def linear_per_draw_grad(self, X) -> tuple[np.ndarray, ...]:
        """:meth:`linear_per_draw` and the gradients of the mean and variance with respect
        to ``X (m, d)``: (S, m), (S, m), (S, m, d), (S, m, d)
        (:func:`~pp_decomp.composition.core.linear_moments_grad`). Raises
        ``NotImplementedError`` where a component has no input gradient."""
        parts = self.per_draw_grad(X)
        S = max(p[0].shape[0] for p in parts)

        def stack(k: int) -> np.ndarray:  # draw s of every component, cycled to S
            return np.stack([np.resize(p[k], (S, *p[k].shape[1:])) for p in parts], 2)

        (w, dw), (b, db) = self.linear.weights_and_grad(X)
        s = self.sign
        return linear_moments_grad(
            stack(0),
            stack(1),
            stack(2),
            stack(3),
            (s * w, s * dw),
            (s * b, s * db),
            self.correlation,
        )

    def h(self, F, X) -> np.ndarray:
        """Signed composition ``sign · g(F; X)`` for ``F (..., m, J)``, ``X (m, d)``."""
        return self.sign * self.problem.compose(F, X)

    def used_per_draw(
        self, X: np.ndarray, draw_idx: np.ndarray, grad: bool = False
    ) -> tuple[list, np.ndarray]:
        """:meth:`per_draw` (with ``grad``, :meth:`per_draw_grad`) of only the draws that
        ``draw_idx (n, J)`` picks (modulo each component's draws), and ``draw_idx``
        renumbered to them: the same samples for
        :func:`~pp_decomp.composition.core.draw_samples`, at a fraction of the cost
        where they use few of the draws (the Monte Carlo bound's 8 joint draws of a
        fast-path step's 32 to 128 reads 8 factors per component, not all of them).
        A component without ``predict_draws`` (``predict_draws_grad``) is predicted
        for all its draws."""
        parts, idx = [], np.array(draw_idx, copy=True)
        for j, c in enumerate(self.components):
            own = getattr(c, "predict_draws_grad" if grad else "predict_draws", None)
            if own is None or warped(c):
                parts.append(draw_moments(c, X, grad))
                continue
            used, idx[:, j] = np.unique(draw_idx[:, j] % c.n_draws, return_inverse=True)
            parts.append(own(X, used))
        return parts, idx

    def marginal_samples(self, X, draw_idx: np.ndarray, z: np.ndarray) -> np.ndarray:
        """Pointwise posterior-predictive samples of the components: (n, m, J).

        ``draw_idx (n, J)`` picks a hyperparameter draw per sample and component
        (taken modulo each component's number of draws) and ``z (n, J)`` are
        standard normals; reusing both across candidates (common random numbers)
        makes the Monte Carlo acquisition a smooth function of ``x``.
        """
        return self._samples(*self.used_per_draw(X, draw_idx), z)

    def marginal_sample_blocks(self, X, draw_idx: np.ndarray, z: np.ndarray, rows: int):
        """:meth:`marginal_samples` in blocks of at most ``rows`` inputs: yields
        ``(slice of X's rows, (n, rows', J) samples)``, the same numbers as one call.

        The components are predicted once, at every row of ``X``; only the samples
        are made block by block, so that a caller reducing them per input (the Monte
        Carlo bound's quantile) never holds all ``n × m × J`` of them.
        """
        per_draw, draw_idx = self.used_per_draw(X, draw_idx)
        m = per_draw[0][0].shape[1]
        for start in range(0, m, rows):
            sl = slice(start, min(m, start + rows))
            yield sl, self._samples([(mu[:, sl], v[:, sl]) for mu, v in per_draw], draw_idx, z)

    def _samples(self, per_draw, draw_idx: np.ndarray, z: np.ndarray) -> np.ndarray:
        """``μ + σ z`` per component (:func:`~pp_decomp.composition.core.draw_samples`),
        a warped component's mapped to its outputs by its draw's warp: an ``(n, m, J)``
        view of a ``(J, n, m)`` array.

        Component-major, each component's samples are contiguous where ``g``
        reads them (``F[..., j]``): 13% less time for the Monte Carlo bound on
        perceived-temperature than interleaved ``(n, m, J)`` storage, same numbers.
        """
        out = draw_samples(per_draw, draw_idx, z)
        return to_outputs(self.components, out, draw_idx).transpose(1, 2, 0)

    def samples_and_gradients(self, X, draw_idx: np.ndarray, z: np.ndarray):
        """Samples ``F (n, m, J)`` at ``X (m, d)`` and ``dF(k)``, their input gradients
        (:func:`~pp_decomp.acquisition.mc_gradient.samples_and_gradients`), from the
        step's draws ``draw_idx (n, J)`` and (coupled) normals ``z (n, J)``; a warped
        component's mapped to its outputs, ``∂y = (∂y/∂z) ∂z`` (``from_latent_slope``)."""
        per_draw, idx = self.used_per_draw(X, draw_idx, True)
        F, dF = samples_and_gradients(per_draw, idx, z)
        bent = [(j, c, idx[:, j] % c.n_draws) for j, c in enumerate(self.components) if warped(c)]
        if not bent:
            return F, dF
        latent = {j: F[..., j].copy() for j, _, _ in bent}
        for j, c, s in bent:
            F[..., j] = c.from_latent(latent[j], s)

        def dF_outputs(k: np.ndarray) -> np.ndarray:
            out, rows = dF(k), np.arange(k.shape[-1])
            for j, c, s in bent:
                out[..., j, :] *= c.from_latent_slope(latent[j][k, rows], s[k])[..., None]
            return out

        return F, dF_outputs

    def joint_sample(self, X, rng: np.random.Generator) -> np.ndarray:
        """One joint sample of every component over the rows of ``X``: (m, J)."""
        return np.stack([c.sample(X, 1, seed=rng, joint=True)[0] for c in self.components], 1)


class CorrelatedSurrogate(DecomposedSurrogate):
    """:class:`DecomposedSurrogate` of correlated components: the views of one
    :class:`~pp_decomp.components.correlated.model.CorrelatedComponents` (``joint``).

    Draw ``s`` is one joint draw of every component, as for independent ones,
    but within it the components are correlated: the linear composition's
    variance is ``wᵀ Σ_s(x) w`` with the components' covariance ``Σ_s(x)``, and
    Monte Carlo samples are ``μ_s(x) + chol(Σ_s(x)) z``.
    """

    def __init__(self, components: Sequence, problem):
        super().__init__(components, problem)
        self.joint = self.components[0].joint

    def moments(self, X) -> tuple[np.ndarray, np.ndarray]:
        return self.joint.predict(X)

    def thinned(self, k: int) -> CorrelatedSurrogate:
        """This surrogate on at most ``k`` joint draws; itself when it has no more."""
        joint = self.joint.thinned(k)
        if joint is self.joint:
            return self
        return CorrelatedSurrogate(joint.components, self.problem)

    def per_draw(self, X) -> list[tuple[np.ndarray, np.ndarray]]:
        mean, cov = self.joint.moments_per_draw(X)
        return [(mean[..., j], cov[..., j, j]) for j in range(mean.shape[-1])]

    def per_draw_grad(self, X) -> list[tuple[np.ndarray, ...]]:
        raise NotImplementedError("correlated components have no input gradient")

    def used_per_draw(self, X, draw_idx: np.ndarray, grad: bool = False) -> tuple[list, np.ndarray]:
        # the joint model predicts every joint draw at once
        return (self.per_draw_grad(X) if grad else self.per_draw(X)), draw_idx

    def moments_grad(self, X) -> tuple[np.ndarray, ...]:
        raise NotImplementedError("correlated components have no input gradient")

    def linear_per_draw_grad(self, X) -> tuple[np.ndarray, ...]:
        raise NotImplementedError("correlated components have no input gradient")

    def linear_per_draw(self, X) -> tuple[np.ndarray, np.ndarray]:
        mean, cov = self.joint.moments_per_draw(X)  # (S, m, J), (S, m, J, J)
        G = self.sign * self.linear.weights(X)  # (m, J)
        return linear_moments(mean, cov, G, self.sign * self.linear.offset_at(X))

    def marginal_samples(self, X, draw_idx: np.ndarray, z: np.ndarray) -> np.ndarray:
        # one joint draw per sample: component 0's index picks it for all
        return self.joint.marginal_samples(X, draw_idx[:, 0], z)

    def marginal_sample_blocks(self, X, draw_idx: np.ndarray, z: np.ndarray, rows: int):
        # one block: the joint model predicts and factorises per call
        yield slice(None), self.marginal_samples(X, draw_idx, z)

    def joint_sample(self, X, rng: np.random.Generator) -> np.ndarray:
        return self.joint.joint_sample(X, rng)


class CopulaSurrogate(DecomposedSurrogate):
    """:class:`DecomposedSurrogate` of independent component GPs whose posterior
    errors are correlated by a Gaussian copula (:mod:`pp_decomp.composition.core`):
    each component keeps its marginal posterior; samples are
    ``μ_j + σ_j (L_C z)_j`` and the linear composition's variance is
    ``Σ_jk w_j w_k C_jk σ_j σ_k`` per joint draw.

    Parameters
    ----------
    components, problem : as :class:`DecomposedSurrogate`
    correlation : (J, J) array, optional
        ``C``; by default :func:`~pp_decomp.composition.core.residual_correlation`
        of ``components``.
    """

    def __init__(self, components: Sequence, problem, correlation=None):
        super().__init__(components, problem)
        C = residual_correlation(self.components) if correlation is None else correlation
        self.correlation = np.asarray(C, dtype=float)
        self.chol = np.linalg.cholesky(self.correlation)

    def thinned(self, k: int) -> CopulaSurrogate:
        thin = super().thinned(k)
        if thin is self:
            return self
        return CopulaSurrogate(thin.components, self.problem, self.correlation)

    def normals(self, z: np.ndarray) -> np.ndarray:
        return coupled_normals(z, self.chol)

    def marginal_samples(self, X, draw_idx: np.ndarray, z: np.ndarray) -> np.ndarray:
        return super().marginal_samples(X, draw_idx, coupled_normals(z, self.chol))

    def marginal_sample_blocks(self, X, draw_idx: np.ndarray, z: np.ndarray, rows: int):
        z = coupled_normals(z, self.chol)
        yield from super().marginal_sample_blocks(X, draw_idx, z, rows)

    def joint_sample(self, X, rng: np.random.Generator) -> np.ndarray:
        """One joint sample over the rows of ``X`` (m, J): ``μ_j + Σ_j^{1/2} u_j`` with
        each component's joint covariance ``Σ_j`` under one of its draws, its
        symmetric square root, and normals ``u`` correlated by ``C`` across
        components. At each input the components' correlation is ``C_jk`` where
        their posteriors have the same shape, less where they differ; unlike a
        Cholesky factor, it does not depend on the order of ``X``'s rows."""
        Z = coupled_normals(rng.standard_normal((len(X), len(self.components))), self.chol)
        out = np.empty(Z.shape)
        for j, c in enumerate(self.components):
            s = rng.integers(getattr(c, "n_draws", 1))
            joint = c.latent_joint_per_draw if warped(c) else c.joint_predict_per_draw
            mean, cov = joint(X, np.array([s]))
            lam, V = np.linalg.eigh(cov[0])
            out[:, j] = mean[0] + V @ (np.sqrt(np.maximum(lam, 0.0)) * (V.T @ Z[:, j]))
            if warped(c):  # drawn on its warped scale, under draw s
                out[:, j] = c.from_latent(out[:, j], np.full(len(X), s))
        return out


def decomposed_surrogate(
    components: Sequence, problem, copula: bool = False
) -> DecomposedSurrogate:
    """The surrogate of the components: :class:`CorrelatedSurrogate` when they are
    views of one correlated model, :class:`CopulaSurrogate` with ``copula``, else
    :class:`DecomposedSurrogate`."""
    if shared_joint(components) is not None:
        return CorrelatedSurrogate(components, problem)
    if copula:
        return CopulaSurrogate(components, problem)
    return DecomposedSurrogate(components, problem)


class ComposedSurrogate:
    """One GP on the signed composed observations ``sign · g(y; x)`` (GP-UCB, EI, PI, GP-MI).

    ``gp`` is a fitted :class:`ComponentGP`, or with known kernels the
    :class:`~pp_decomp.EntireGP` of the signed linear composition.
    """

    def __init__(self, gp: ComponentGP | EntireGP):
        self.gp = gp

    def thinned(self, k: int) -> ComposedSurrogate:
        """This surrogate on at most ``k`` of its GP's draws, if it can be thinned."""
        gp = _thinned(self.gp, k)
        return self if gp is self.gp else ComposedSurrogate(gp)

    def per_draw(self, X) -> tuple[np.ndarray, np.ndarray]:
        """Per-draw means and variances at ``X``, each ``(S, m)``."""
        return self.gp.predict_per_draw(X)

    def per_draw_grad(self, X) -> tuple[np.ndarray, ...]:
        """:meth:`per_draw` and its gradients in ``X (m, d)``: (S, m), (S, m), (S, m, d),
        (S, m, d); ``NotImplementedError`` where the GP has none."""
        grad = getattr(self.gp, "predict_per_draw_grad", None)
        if grad is None:
            raise NotImplementedError(f"{type(self.gp).__name__} has no input gradient")
        return grad(X)

    def moments(self, X) -> tuple[np.ndarray, np.ndarray]:
        """Mixture mean and variance over the hyperparameter draws at ``X``, each ``(m,)``."""
        return self.gp.predict(X)

    def joint_sample(self, X, rng: np.random.Generator) -> np.ndarray:
        """One joint posterior sample of the composed output at ``X``, ``(m,)``."""
        return self.gp.sample(X, 1, seed=rng, joint=True)[0]


_CHUNK = 128  # new points per joint covariance: bounds the (S, k + chunk, k + chunk) array


class HallucinatedGP:
    """A GP model (:class:`~pp_decomp.components.gp.protocol.GPModel`) that has also
    observed its own posterior mean at the pending inputs ``P (k, d)``."""

    def __init__(self, gp, P: np.ndarray):
        self.gp, self.name = gp, gp.name
        self.P = np.atleast_2d(np.asarray(P, dtype=float))
        self._noise_P = self._noise(self.P)

    def _gp_per_draw(self, X, pred_noise: bool = False):
        """The GP's own per-draw moments, where each draw is Gaussian."""
        return self.gp.predict_per_draw(X, pred_noise)

    def _gp_joint(self, X, idx):
        """The GP's own per-draw joint moments of the draws ``idx``."""
        return self.gp.joint_predict_per_draw(X, idx)

    def _noise(self, X: np.ndarray) -> np.ndarray:
        """Each draw's observation-noise variance at ``X``: (S, m)."""
        _, var_f = self._gp_per_draw(X)
        _, var_y = self._gp_per_draw(X, pred_noise=True)
        return np.maximum(var_y - var_f, 0.0)

    @property
    def n_draws(self) -> int:
        return self.gp.n_draws

    def _reduction(self, X: np.ndarray, idx: np.ndarray):
        """Means (S', m), prior-to-hallucination covariances (S', m, m) and the
        hallucinated covariance reduction ``Vᵀ V`` factor ``V`` (S', k, m) at ``X``."""
        k = len(self.P)
        mean, C = self._gp_joint(np.vstack([self.P, X]), idx)
        A = C[:, :k, :k]
        diag = np.arange(k)
        A[:, diag, diag] += self._noise_P[idx]
        V = np.linalg.solve(np.linalg.cholesky(A), C[:, :k, k:])
        return mean[:, k:], C[:, k:, k:], V

    def joint_predict_per_draw(self, Xnew, idx=None) -> tuple[np.ndarray, np.ndarray]:
        """Per-draw joint means (S', m) and hallucinated covariances (S', m, m)."""
        idx = np.arange(self.n_draws) if idx is None else np.asarray(idx)
        mean, cov, V = self._reduction(np.asarray(Xnew, dtype=float), idx)
        return mean, cov - V.transpose(0, 2, 1) @ V

    def predict_per_draw(self, Xnew, pred_noise: bool = False):
        """Per-draw means (unchanged) and hallucinated variances at ``Xnew``: (S, m) each."""
        X = np.asarray(Xnew, dtype=float)
        mean, var = self._gp_per_draw(X, pred_noise)
        return mean, self._reduced(X, np.arange(self.n_draws), var)

    def predict_draws(self, X: np.ndarray, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`predict_per_draw` (latent ``f``) of draws ``idx`` only: (len(idx), m)
        each, at the cost of those draws where the GP predicts draws alone
        (``predict_draws``)."""
        X, idx = np.asarray(X, dtype=float), np.asarray(idx)
        own = getattr(self.gp, "predict_draws", None)
        if own is not None:
            mean, var = own(X, idx)
        else:
            mean, var = (a[idx] for a in self._gp_per_draw(X))
        return mean, self._reduced(X, idx, var)

    def _reduced(self, X: np.ndarray, idx: np.ndarray, var: np.ndarray) -> np.ndarray:
        """Draws ``idx``'s variances ``var (len(idx), m)`` at ``X``, in place, less the
        pending inputs' reduction, in chunks of :data:`_CHUNK` inputs."""
        for start in range(0, len(X), _CHUNK):
            sl = slice(start, start + _CHUNK)
            _, _, V = self._reduction(X[sl], idx)
            var[:, sl] = np.maximum(var[:, sl] - np.einsum("skm,skm->sm", V, V), 0.0)
        return var

    def predict(self, Xnew, pred_noise: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """Equal-weight mixture mean and variance over the draws: (m,) each."""
        return mixture_moments(*self.predict_per_draw(Xnew, pred_noise))

    def sample(
        self, Xnew, n_samples: int, seed=None, joint: bool = False, pred_noise: bool = False
    ) -> np.ndarray:
        """Samples of the hallucinated posterior at ``Xnew``: (n_samples, m)."""
        return self._samples(Xnew, n_samples, seed, joint, pred_noise)[0]

    def _samples(self, Xnew, n_samples, seed, joint, pred_noise):
        """:meth:`sample`'s samples, each of the draw it names: (n_samples, m), (n_samples,)."""
        n_samples = check_positive_int(n_samples, "n_samples")
        rng = as_generator(seed)
        X = np.asarray(Xnew, dtype=float)
        s_idx = rng.integers(0, self.n_draws, size=n_samples)
        z = rng.standard_normal((n_samples, len(X)))
        if not joint:
            mean, var = HallucinatedGP.predict_per_draw(self, X, pred_noise)
            return mean[s_idx] + np.sqrt(var[s_idx]) * z, s_idx
        uniq, inverse = np.unique(s_idx, return_inverse=True)
        mean, cov = HallucinatedGP.joint_predict_per_draw(self, X, uniq)
        diag = np.arange(len(X))
        scale = np.abs(cov[:, diag, diag]).max(axis=1, keepdims=True)
        noise = self._noise(X)[uniq] if pred_noise else None
        jitter = 1e-6 * np.maximum(scale, 1e-12)
        return joint_samples(mean, cov, inverse, z, jitter, noise), s_idx


_LATENT_ONLY = (
    "component {!r}: a warped GP's per-draw Gaussian moments are on the warped scale; "
    "use latent_per_draw, predict or sample"
)


class HallucinatedWarpedGP(HallucinatedGP):
    """:class:`HallucinatedGP` of a warped GP
    (:class:`~pp_decomp.components.gp.warped.WarpedGP`): its pending inputs observed
    at their posterior mean on the warped scale, where each draw is Gaussian (the
    reduction of :class:`HallucinatedGP` there); its samples and predictions map to
    the outputs by each draw's warp."""

    def _gp_per_draw(self, X, pred_noise: bool = False):
        return self.gp.latent_per_draw(X, pred_noise)

    def _gp_joint(self, X, idx):
        return self.gp.latent_joint_per_draw(X, idx)

    def latent_per_draw(self, Xnew, pred_noise: bool = False):
        """Per-draw means (unchanged) and hallucinated variances on the warped scale."""
        return HallucinatedGP.predict_per_draw(self, Xnew, pred_noise)

    def latent_joint_per_draw(self, Xnew, idx=None):
        """Per-draw joint means and hallucinated covariances on the warped scale."""
        return HallucinatedGP.joint_predict_per_draw(self, Xnew, idx)

    def from_latent(self, Z: np.ndarray, s: np.ndarray) -> np.ndarray:
        """The warped GP's map of warped-scale values ``Z`` under draws ``s`` to ``y``."""
        return self.gp.from_latent(Z, s)

    def from_latent_slope(self, Z: np.ndarray, s: np.ndarray) -> np.ndarray:
        """``∂ from_latent / ∂Z``, the warped GP's."""
        return self.gp.from_latent_slope(Z, s)

    def predict(self, Xnew, pred_noise: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """Mixture mean and variance in the outputs' units (the warped GP's quadrature)."""
        mean, var = self.latent_per_draw(Xnew, pred_noise)
        return self.gp.output_moments(mean, np.sqrt(var))

    def sample(self, Xnew, n_samples: int, seed=None, joint: bool = False, pred_noise=False):
        """Samples in the outputs' units, each mapped by its own draw's warp."""
        z, s_idx = self._samples(Xnew, n_samples, seed, joint, pred_noise)
        return self.gp.from_latent(z, s_idx)

    def predict_per_draw(self, Xnew, pred_noise: bool = False):
        raise NotImplementedError(_LATENT_ONLY.format(self.name))

    def joint_predict_per_draw(self, Xnew, idx=None):
        raise NotImplementedError(_LATENT_ONLY.format(self.name))

    def predict_draws(self, X, idx):
        raise NotImplementedError(_LATENT_ONLY.format(self.name))


def _hallucinated(component, P: np.ndarray) -> HallucinatedGP:
    return (HallucinatedWarpedGP if warped(component) else HallucinatedGP)(component, P)


def hallucinate(surrogate, P: np.ndarray):
    """The surrogate of a step with pending inputs ``P (k, d)`` hallucinated
    (the surrogate itself when ``P`` is empty)."""
    if surrogate is None or not len(P):
        return surrogate
    if isinstance(surrogate, CorrelatedSurrogate):
        raise ValueError(
            f"correlated=True chooses one input at a time after the design: {len(P)} "
            "input(s) are pending; tell their results (or run with workers=1) first"
        )
    if isinstance(surrogate, CopulaSurrogate):  # C stays that of the observed data
        comps = [_hallucinated(c, P) for c in surrogate.components]
        return CopulaSurrogate(comps, surrogate.problem, surrogate.correlation)
    if isinstance(surrogate, DecomposedSurrogate):
        comps = [_hallucinated(c, P) for c in surrogate.components]
        return DecomposedSurrogate(comps, surrogate.problem)
    if isinstance(surrogate, ComposedSurrogate):
        return ComposedSurrogate(HallucinatedGP(surrogate.gp, P))
    raise TypeError(f"cannot hallucinate pending inputs on a {type(surrogate).__name__}")
