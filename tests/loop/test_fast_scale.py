"""The fast path on many points: draws held within a memory budget, and a fit's
factors taken over by the incremental posterior."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest

from pp_decomp import Optimizer
from pp_decomp.loop import FastSettings
from pp_decomp.models import get_problem


def test_kept_draws_fall_with_the_data_within_the_memory_budget():
    s = FastSettings()
    assert [s.kept_at(n) for n in (5, 100, 362)] == [128, 128, 128]
    assert s.kept_at(500) == 2**27 // (8 * 500**2) == 67
    assert s.kept_at(1000) == s.kept_at(10**5) == 32  # PSIS's k̂ needs the floor
    assert FastSettings(kept_draws=8).kept_at(10**4) == 8  # asked for fewer: kept
    assert FastSettings(held_bytes=2**30).kept_at(1000) == 128
    with pytest.raises(ValueError, match="held_bytes.*0"):
        FastSettings(held_bytes=0)


def test_a_first_fit_on_data_brought_in_keeps_the_draws_its_budget_allows():
    problem = get_problem("synthetic", seed=5, n_components=2, n_points=120)
    rng = np.random.default_rng(0)
    X = problem.domain.X[rng.choice(120, 60, replace=False)]
    fs = FastSettings(held_bytes=8 * 60**2 * 40)  # 40 draws of 60 points
    opt = Optimizer(problem, inference="nuts", seed=1, fast_settings=fs)
    opt.tell(X, problem.evaluate(X, seed=rng))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        opt.ask()
    held = {n: len(fc.post.logw) for n, fc in opt.updater.components.items()}
    assert held == {"f0": 40, "f1": 40}, held
    assert all(fc.gp.diagnostics.proposal == "laplace" for fc in opt.updater.components.values())


def test_a_fits_factors_are_taken_over_not_computed_again(monkeypatch):
    """The incremental posterior built on a fit's draws takes the fit's own ``L⁻¹``
    (the same ``K``): the same numbers, one factorisation fewer."""
    from pp_decomp.components.posterior import incremental

    problem = get_problem("synthetic", seed=5, n_components=2, n_points=120)
    rng = np.random.default_rng(0)
    X = problem.domain.X[rng.choice(120, 40, replace=False)]
    Y = problem.evaluate(X, seed=rng)
    opt = Optimizer(problem, inference="nuts", seed=1)
    opt.tell(X, Y)
    calls = []
    real = incremental.cholesky_inverse
    monkeypatch.setattr(incremental, "cholesky_inverse", lambda K: calls.append(1) or real(K))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        opt.ask()
    assert calls == []
    fc = opt.updater.components["f0"]
    Xs, ys = fc.gp.scale_X(X), (Y[:, 0] - fc.gp.y_mean) / fc.gp.y_std
    fresh = incremental.IncrementalPosterior(
        fc.gp.posterior_kernel, Xs, ys, fc.gp.draws, fc.Xc_scaled, fc.gp.mean_var
    )
    np.testing.assert_array_equal(fresh.L_inv, fc.post.L_inv)
    np.testing.assert_array_equal(fresh.mean, fc.post.mean)
    with pytest.raises(ValueError, match=r"L_inv must have shape \(128, 40, 40\); got \(40, 40\)"):
        incremental.IncrementalPosterior(
            fc.gp.posterior_kernel, Xs, ys, fc.gp.draws, L_inv=fresh.L_inv[0]
        )


@pytest.mark.slow
def test_a_refit_that_fails_on_many_points_keeps_the_draws_and_is_repaired(monkeypatch, tmp_path):
    """On ``mode_from`` points or more no refit runs NUTS on the ask's path: one whose
    weights fail (forced here) keeps the draws, says so (``converged`` False,
    ``fit_draws`` "kept"), and NUTS repairs them in the background, consumed two
    lags later; a run killed with the repair in flight resumes to the same choices."""
    from pp_decomp.loop.updaters import fast

    tried = []
    monkeypatch.setattr(fast, "refresh_fit", lambda *a, **k: tried.append("refresh") or False)
    monkeypatch.setattr(fast, "laplace_fit", lambda *a, **k: tried.append("mode") or False)
    problem = get_problem("synthetic", seed=5, n_components=2, n_points=120)
    fs = FastSettings(
        draws=100, tune=150, chains=2, max_age=2, lag=2, kept_draws=64, prior_draws=0, mode_from=6
    )
    kw = dict(inference="nuts", seed=4, n_init=4, fast_settings=fs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # tiny NUTS settings: diagnostics may complain
        full = Optimizer(problem, "d-gpucb", **kw).run(13)
        path = tmp_path / "fast.nc"
        part = Optimizer(problem, "d-gpucb", checkpoint=path, **kw)
        # stopped at the first step with a repair in flight (where falls with the
        # instance, whose last bits differ across BLAS builds)
        for n in range(6, 12):
            part.run(n)
            jobs = [fc.job for fc in part.updater.components.values() if fc.job is not None]
            if any(job.repair for job in jobs):
                break
        part.close()
        resumed = Optimizer.resume(path, problem).run(13)
    np.testing.assert_array_equal(resumed["x"], full["x"])
    assert any(job.repair for job in jobs), "the checkpoint should hold a repair in flight"
    kind, converged = full["fit_draws"].values, full["converged"].values
    assert (kind == "kept").sum() >= 2 and not converged[kind == "kept"].any()
    assert np.isin(kind, ["chains", "reweighted chains"]).sum() >= 2  # first fits and repairs
    assert "refresh" in tried and "mode" in tried
    # a kept refit is followed by its repair, never by a NUTS run on the ask's path
    for k in range(kind.shape[1]):
        steps = [kind[i, k] for i in range(kind.shape[0]) if kind[i, k]]
        for before, after in itertools.pairwise(steps):
            assert before != "kept" or after in ("chains", "reweighted chains"), steps
