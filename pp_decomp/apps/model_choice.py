"""A component's model compared by PSIS-LOO among candidates, and stacked.

Each candidate GP is fitted to the same data ``(X, y)``; its exact Gaussian
PSIS-LOO (:mod:`pp_decomp.components.criticism`) gives the pointwise
``elpd_{m,i} = log p_m(y_i | y_{-i})``. Candidates are ranked by
``elpd_loo_m = Σ_i elpd_{m,i}``, with the standard error of each one's
difference from the best, ``√n · sd_i(elpd_{m,i} - elpd_{best,i})``; the
stacking weights of Yao, Vehtari, Simpson & Gelman (2018) maximise
``Σ_i log Σ_m w_m exp(elpd_{m,i})`` over the simplex, and the stacked
predictive is the mixture ``Σ_m w_m p_m(f(x) | y)``.

The default candidates (:func:`default_candidates`) are Matérn 1/2, 3/2, 5/2 and
the squared exponential, each with ``InverseGamma(3, 0.6)`` or the
dimension-scaled ``LogNormal(√2 + ½ log d, √3)`` lengthscales.

A loop does not choose its components' models by LOO: on the flu problem the
LOO ranking is the reverse of the coverage ranking over the box (docs/design.md,
"Choosing a component's model by LOO").

Example
-------
>>> import numpy as np
>>> from pp_decomp.apps.model_choice import choose_model
>>> X = np.random.default_rng(0).uniform(size=(20, 1))
>>> choice = choose_model(X, np.sin(6 * X[:, 0]), seed=0)
>>> round(float(choice.weights.sum()), 6), choice.best in choice.names
(1.0, True)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import xarray as xr
from scipy.optimize import minimize
from scipy.special import logsumexp, softmax

from pp_decomp.components import ComponentGP
from pp_decomp.components.criticism import Criticism, criticise
from pp_decomp.kernels import ExpQuad, Kernel, Matern12, Matern32, Matern52
from pp_decomp.prior import Prior
from pp_decomp.validate import SeedLike, as_generator, check_X, check_y

FAMILIES = {"Matern12": Matern12, "Matern32": Matern32, "Matern52": Matern52, "ExpQuad": ExpQuad}


def default_candidates(input_dim: int) -> dict[str, Kernel]:
    """The default candidate kernels on ``input_dim`` inputs, by name
    (``"Matern12/inverse-gamma"``, ``"ExpQuad/lognormal"``, ...): four families
    × two lengthscale priors."""
    d = int(input_dim)
    priors = {
        "inverse-gamma": Prior("InverseGamma", alpha=3.0, beta=0.6),
        "lognormal": Prior("LogNormal", mu=math.sqrt(2.0) + 0.5 * math.log(d), sigma=math.sqrt(3)),
    }
    return {f"{f}/{p}": family(ls=ls) for f, family in FAMILIES.items() for p, ls in priors.items()}


def stacking_weights(elpd_i: np.ndarray) -> np.ndarray:
    """Stacking weights ``(M,)`` of ``M`` models from their pointwise LOO log
    densities ``(M, n)``: ``argmax_w Σ_i log Σ_m w_m exp(elpd_{m,i})`` over the
    simplex, by L-BFGS on the softmax parameters (the objective is concave in ``w``)."""
    elpd_i = np.asarray(elpd_i, dtype=float)
    M = elpd_i.shape[0]
    if M == 1:
        return np.ones(1)
    shifted = elpd_i - elpd_i.max(axis=0)  # a constant per observation: same argmax

    def loss(z):
        w = softmax(z)
        lse = logsumexp(shifted, axis=0, b=w[:, None])
        p = np.exp(shifted - lse)  # (M, n): w-gradient of each term
        grad_w = -p.sum(axis=1)
        return -lse.sum(), w * (grad_w - w @ grad_w)

    res = minimize(
        loss, np.zeros(M), jac=True, method="L-BFGS-B", options={"gtol": 1e-10, "ftol": 1e-15}
    )
    return softmax(res.x)


@dataclass(frozen=True)
class ModelChoice:
    """Candidates fitted to the same data, compared by PSIS-LOO, and stacked.

    ``names (M,)``; ``models``: the fitted GPs; ``criticism``: each one's
    :class:`~pp_decomp.components.criticism.Criticism`; ``weights (M,)``: the stacking
    weights; :attr:`best`: the candidate with the largest ``elpd_loo``.
    :meth:`sample` and :meth:`predict` give the stacked predictive.
    """

    names: tuple[str, ...]
    models: tuple
    criticism: tuple[Criticism, ...]
    weights: np.ndarray

    @property
    def elpd_loo(self) -> np.ndarray:
        """``Σ_i elpd_{m,i}`` per candidate (M,)."""
        return np.array([c.elpd_loo for c in self.criticism])

    @property
    def best(self) -> str:
        """The name of the candidate with the largest ``elpd_loo``."""
        return self.names[int(np.argmax(self.elpd_loo))]

    def model(self, name: str | None = None):
        """The fitted GP of candidate ``name`` (default :attr:`best`)."""
        return self.models[self.names.index(self.best if name is None else name)]

    def to_dataset(self) -> xr.Dataset:
        """The comparison over ``model``: ``elpd_loo``, ``elpd_se``, ``elpd_diff``
        and ``diff_se`` (from the best), ``pareto_k_max``, ``loo_pit_distance``,
        ``loo_coverage`` and the stacking ``weight``."""
        elpd_i = np.stack([c.elpd_i for c in self.criticism])
        diff = elpd_i - elpd_i[int(np.argmax(self.elpd_loo))]
        n = elpd_i.shape[1]
        fields = {
            "elpd_loo": self.elpd_loo,
            "elpd_se": [c.elpd_se for c in self.criticism],
            "elpd_diff": diff.sum(axis=1),
            "diff_se": np.sqrt(n * diff.var(axis=1)),
            "pareto_k_max": [c.pareto_k_max for c in self.criticism],
            "loo_pit_distance": [c.pit_distance for c in self.criticism],
            "loo_coverage": [c.loo_coverage for c in self.criticism],
            "weight": self.weights,
        }
        return xr.Dataset(
            {k: ("model", np.asarray(v, dtype=float)) for k, v in fields.items()},
            coords={"model": list(self.names)},
        )

    def sample(self, Xnew, n_samples: int, seed: SeedLike = None) -> np.ndarray:
        """Draws of ``f`` at ``Xnew (m, d)`` from the stacked predictive: (n_samples, m),
        each from candidate ``m`` with probability ``w_m``."""
        rng = as_generator(seed)
        counts = rng.multinomial(int(n_samples), self.weights)
        pairs = zip(self.models, counts, strict=True)
        parts = [gp.sample(Xnew, int(c), seed=rng) for gp, c in pairs if c > 0]
        out = np.concatenate(parts)
        return out[rng.permutation(len(out))]

    def predict(self, Xnew) -> tuple[np.ndarray, np.ndarray]:
        """Mean and variance of the stacked predictive of ``f`` at ``Xnew``: (m,), (m,)."""
        moments = [gp.predict(Xnew) for gp in self.models]
        mean = sum(w * mu for w, (mu, _) in zip(self.weights, moments, strict=True))
        second = sum(w * (v + mu**2) for w, (mu, v) in zip(self.weights, moments, strict=True))
        return mean, np.maximum(second - mean**2, 0.0)


def choose_model(
    X,
    y,
    candidates: dict | None = None,
    *,
    inference: str = "map",
    bounds=None,
    name: str = "f",
    seed: SeedLike = None,
) -> ModelChoice:
    """Fit every candidate to ``(X (n, d), y (n,))`` and compare them by PSIS-LOO.

    ``candidates``: name → kernel (a :mod:`pp_decomp.kernels` expression or a
    shorthand) or an unfitted :class:`~pp_decomp.ComponentGP`; default
    :func:`default_candidates`. ``inference``: ``"map"`` or ``"nuts"``, each
    candidate fitted with the same seed. Returns a :class:`ModelChoice`.
    """
    X = check_X(X)
    y = check_y(y, "y", len(X))
    candidates = default_candidates(X.shape[1]) if candidates is None else dict(candidates)
    if not candidates:
        raise ValueError("candidates must name at least one model; got none")
    seed_int = int(as_generator(seed).integers(2**31))
    models = []
    for label, c in candidates.items():
        gp = c if isinstance(c, ComponentGP) else ComponentGP(c, bounds=bounds, name=name)
        if not hasattr(gp, "loo_data"):
            raise TypeError(f"candidates[{label!r}]: {type(gp).__name__} has no LOO criticism")
        models.append(gp.fit(X, y, inference, seed=seed_int))
    crit = tuple(criticise(gp) for gp in models)
    weights = stacking_weights(np.stack([c.elpd_i for c in crit]))
    return ModelChoice(tuple(candidates), tuple(models), crit, weights)
