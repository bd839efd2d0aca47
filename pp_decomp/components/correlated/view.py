"""One component of :class:`~pp_decomp.components.correlated.model.CorrelatedComponents`
seen as a GP, and the NUTS fit of the correlated model.

The view answers what is asked of one component GP (``predict``,
``predict_per_draw``, ``sample``, ``n_draws``, ``name``) from the joint
posterior, and keeps a reference to it (``joint``) so that whatever combines
the components (:class:`~pp_decomp.acquisition.surrogate.CorrelatedSurrogate`,
the calibration report) can use their correlation.
"""

from __future__ import annotations

import time
from dataclasses import replace

import numpy as np

from pp_decomp._runtime import quiet_third_party
from pp_decomp.components.diagnostics import CONVERGENCE, summarize_nuts
from pp_decomp.components.inference.native import NutsModel
from pp_decomp.components.inference.reweight import reweight_chains
from pp_decomp.components.posterior.batched import mixture_moments
from pp_decomp.validate import SeedLike, as_generator, check_positive_int


def shared_joint(components):
    """The :class:`~pp_decomp.components.correlated.model.CorrelatedComponents` whose views
    ``components`` are, in its order, or ``None`` for independent GPs.

    Raises a ValueError for views mixed with other GPs, views of several models,
    or views out of their model's order: combined as given, their correlation
    (or weights) would silently apply to the wrong components.
    """
    joints = [getattr(c, "joint", None) for c in components]
    if all(j is None for j in joints):
        return None
    joint = joints[0]
    order = [getattr(c, "j", None) for c in components]
    if any(j is not joint for j in joints) or order != list(range(joint.n_components)):
        raise ValueError(
            "correlated components must be combined as their model's views, all of "
            f"them in its order ({joint.names if joint is not None else 'one model'}); "
            f"got components {[getattr(c, 'name', type(c).__name__) for c in components]}"
        )
    return joint


class CorrelatedComponent:
    """Component ``j`` of a fitted
    :class:`~pp_decomp.components.correlated.model.CorrelatedComponents`."""

    def __init__(self, joint, j: int):
        self.joint, self.j, self.name = joint, int(j), joint.names[j]

    @property
    def n_draws(self) -> int:
        return self.joint.n_draws

    @property
    def diagnostics(self):
        return self.joint.diagnostics

    def predict_per_draw(self, Xnew, pred_noise: bool = False):
        """Per-draw means and variances at ``Xnew`` in original units: (S, m), (S, m)."""
        mean, cov = self.joint.moments_per_draw(Xnew)
        var = cov[..., self.j, self.j]
        if pred_noise:
            var = var + self.joint.noise_var[:, self.j, None]
        return mean[..., self.j], var

    def predict(self, Xnew, pred_noise: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """Mixture mean and variance at ``Xnew``: (m,), (m,)."""
        return mixture_moments(*self.predict_per_draw(Xnew, pred_noise))

    def sample(
        self, Xnew, n_samples: int, seed: SeedLike = None, joint: bool = False, pred_noise=False
    ) -> np.ndarray:
        """Samples of this component at ``Xnew``: (n_samples, m); pointwise, or
        jointly over the inputs with ``joint=True``."""
        n_samples = check_positive_int(n_samples, "n_samples")
        rng = as_generator(seed)
        if joint:
            if pred_noise:
                raise ValueError("pred_noise=True with joint=True is not available here")
            return np.stack(
                [self.joint.joint_sample(Xnew, rng)[:, self.j] for _ in range(n_samples)]
            )
        idx = rng.integers(0, self.n_draws, n_samples)
        z = rng.standard_normal((n_samples, self.joint.n_components))
        f = self.joint.marginal_samples(Xnew, idx, z)[..., self.j]
        if pred_noise:  # the noise of the draw each sample is from
            noise_sd = np.sqrt(self.joint.noise_var[idx, self.j])[:, None]
            f = f + noise_sd * rng.standard_normal(f.shape)
        return f

    def __repr__(self) -> str:
        return f"CorrelatedComponent({self.name!r}, j={self.j} of {self.joint!r})"


def coregion_nuts(density, z0: np.ndarray, draws: int, tune: int, chains: int, seed: int):
    """NUTS (nutpie) on :class:`~pp_decomp.components.correlated.density.CoregionDensity`
    (with its Jacobian; a :class:`~pp_decomp.components.inference.native.NutsModel`), every
    chain started at ``z0`` jittered by ``U(-0.1, 0.1)``.

    Returns the posterior tree (variable ``z``, the flat log-space point), the
    draws to use as rows ``(chains · draws, k)`` (:func:`weigh_failed_chains`)
    and their :class:`~pp_decomp.components.diagnostics.FitDiagnostics`.
    """
    import nutpie

    k = density.size

    def make_logp():
        def logp(x):
            try:
                value, grad = density(x)
            except (ValueError, np.linalg.LinAlgError):  # far in a tail: a numerical failure
                return -np.inf, np.zeros(k)
            if not np.isfinite(value) or not np.all(np.isfinite(grad)):
                return -np.inf, np.zeros(k)
            return value, grad

        return logp

    def expand(x):
        return {"z": np.asarray(x, dtype=float).copy()}

    def initial(seed_: int) -> np.ndarray:
        return z0 + np.random.default_rng(seed_).uniform(-0.1, 0.1, k)

    model = NutsModel(k, make_logp, lambda: expand, ("z",), ((k,),), {}, initial)
    start = time.perf_counter()
    with quiet_third_party():
        idata = nutpie.sample(
            model.build(chain_draws=tune + draws),
            draws=draws,
            tune=tune,
            chains=chains,
            cores=min(chains, 2),
            seed=seed,
            progress_bar=False,
        )
    chains_z = np.asarray(idata["posterior"]["z"].values)  # (C, D, k)
    diag = summarize_nuts(idata, ["z"])
    Z, diag = weigh_failed_chains(density, chains_z, diag, seed)
    return idata, Z, replace(diag, seconds=time.perf_counter() - start)


def _safe_value(density, z: np.ndarray) -> float:
    """The log density at ``z``, ``-inf`` where it fails numerically (a proposal's tail)."""
    try:
        value = density(z)[0]
    except (ValueError, np.linalg.LinAlgError):
        return -np.inf
    return value if np.isfinite(value) else -np.inf


def weigh_failed_chains(density, chains_z: np.ndarray, diag, seed: int):
    """The draws to use and their diagnostics: the chains' own where they pass
    :data:`~pp_decomp.components.diagnostics.CONVERGENCE`, else the chains weighed by
    importance sampling (:mod:`~pp_decomp.components.inference.reweight`, as a component
    GP's failed fit is) where those weights pass their checks, else the chains
    as they are, the fit marked not converged."""
    C, D, k = chains_z.shape
    if not diag.problems():
        return chains_z.reshape(-1, k), diag
    out = reweight_chains(
        chains_z,
        lambda Zq: np.array([_safe_value(density, z) for z in Zq]),
        C * D,
        np.random.default_rng(seed),
        CONVERGENCE.ess_min,
    )
    if out is None:
        return chains_z.reshape(-1, k), replace(diag, converged=False)
    draws, ess, pareto_k = out
    return draws, replace(
        diag, ess_bulk_min=ess, ess_tail_min=ess, reweighted=True, pareto_k=pareto_k
    )
