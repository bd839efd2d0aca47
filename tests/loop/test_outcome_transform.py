"""Outcome transforms: the component GPs regress ``log y_j`` (``Optimizer(outcome_transform=)``)."""

from __future__ import annotations

import numpy as np
import pytest

from pp_decomp import Optimizer, Problem
from pp_decomp.apps.calibration import LEVELS, sample_coverage, step_coverage
from pp_decomp.problem import forward, inverse, model_problem
from pp_decomp.space import Box


def _positive(seed: int = 0) -> Problem:
    """Two positive components spanning two orders of magnitude, summed (linear g)."""

    def components(X):
        a = np.exp(-6 * np.sum((X - 0.3) ** 2, axis=-1))
        b = np.exp(-3 * np.sum((X - 0.6) ** 2, axis=-1))
        return np.stack([0.01 + a, 0.02 + 0.5 * b], axis=-1)

    return Problem(
        domain=Box([0.0, 0.0], [1.0, 1.0]),
        components=components,
        n_components=2,
        weights=np.array([1.0, 2.0]),
        name="positive",
        metadata={"seed": seed},
    )


def test_forward_inverse_and_the_model_problem():
    p = _positive()
    Y = np.array([[0.5, 2.0], [1e-3, 3.0]])
    np.testing.assert_allclose(inverse("log", forward("log", Y)), Y)
    assert model_problem(p, "none") is p
    m = model_problem(p, "log")
    assert m.linear is None and m.components is None
    assert m.component_names == p.component_names and m.sign == p.sign
    X = p.domain.sample(7, seed=1)
    F = p.components(X)
    # the modelled composition of log y is the objective of y
    np.testing.assert_allclose(m.compose(np.log(F), X), p.compose(F, X))


def test_a_non_positive_component_is_named():
    with pytest.raises(ValueError, match=r"f1 = -0\.2"):
        forward("log", np.array([[0.1, -0.2]]), ["f0", "f1"])
    with pytest.raises(ValueError, match="component 0 = 0.0"):
        forward("log", np.array([[0.0, 1.0]]))


def test_the_gps_regress_log_y_and_the_default_is_the_monte_carlo_min():
    p = _positive()
    opt = Optimizer(p, n_init=4, seed=0, outcome_transform="log")
    assert opt.settings.strategy == "d-gpucb-mc-min"
    ds = opt.run(7)
    for j, name in enumerate(p.component_names):
        np.testing.assert_allclose(
            opt.models[name].y_train, np.log(opt.Y[: len(opt.models[name].y_train), j])
        )
    # the results keep the system's units
    np.testing.assert_allclose(ds["y"].values, opt.Y)
    assert np.all(ds["y"].values > 0)


@pytest.mark.parametrize(
    "kw,match",
    [
        (dict(strategy="d-gpucb"), "analytic bound needs a linear g"),
        (dict(strategy="gp-ucb"), "strategy 'gp-ucb' models 'composed'"),
        (dict(outcome_transform="sqrt"), r"outcome_transform must be one of \('none', 'log'\)"),
    ],
)
def test_settings_that_cannot_transform_are_refused(kw, match):
    kw.setdefault("outcome_transform", "log")
    with pytest.raises(ValueError, match=match):
        Optimizer(_positive(), **kw)


def test_a_non_positive_result_is_refused_before_it_is_recorded():
    opt = Optimizer(_positive(), outcome_transform="log")
    x = np.array([0.2, 0.4])
    with pytest.raises(ValueError, match=r"f0 = 0\.0 at x=\[0\.2, 0\.4\]; it was not recorded"):
        opt.tell(x, [0.0, 1.0])
    assert opt.n == 0
    opt.tell(x, [0.5, 1.0])
    assert opt.n == 1


def test_a_transformed_run_resumes_with_the_same_choices(tmp_path):
    p = _positive()
    full = Optimizer(p, n_init=4, seed=2, outcome_transform="log").run(8)
    part = Optimizer(p, n_init=4, seed=2, outcome_transform="log", checkpoint=tmp_path / "r.nc")
    part.run(6)
    resumed = Optimizer.resume(tmp_path / "r.nc", p)
    assert resumed.settings.model.outcome_transform == "log"
    np.testing.assert_array_equal(resumed.run(8)["x"].values, full["x"].values)


def test_calibration_scores_the_components_in_their_own_units():
    """Quantiles of ``log y`` cover ``log y`` exactly when those of ``y`` cover ``y``."""
    p = _positive()
    opt = Optimizer(p, n_init=4, seed=3, outcome_transform="log", copula=False)  # drawn apart below
    opt.run(6)
    opt.ask()
    X = p.domain.sample(64, seed=4)
    got = step_coverage(opt.setup, opt.state, opt.models, opt.n + 1, X, n_samples=400, seed=5)
    rng = np.random.default_rng(5)
    draws = np.stack([opt.models[n].sample(X, 400, seed=rng) for n in p.component_names], axis=-1)
    F = p.components(X)
    for j in range(2):
        want = sample_coverage(np.exp(draws[..., j]), F[:, j], LEVELS)
        np.testing.assert_allclose(got["component"][j], want)
    h = p.compose(np.exp(draws), X)
    np.testing.assert_allclose(got["objective"], sample_coverage(h, p.compose(F, X), LEVELS))


def _sometimes_negative() -> Problem:
    """``_positive``'s components, the second one -1 wherever ``x_0 > 0.8``."""
    p = _positive()

    def components(X):
        F = p.components(X)
        F[:, 1] = np.where(np.asarray(X)[:, 0] > 0.8, -1.0, F[:, 1])
        return F

    return Problem(domain=p.domain, components=components, n_components=2, g=lambda F: F.sum(-1))


def test_the_error_policy_applies_to_a_non_positive_result():
    from pp_decomp.loop.evaluate import evaluate_with_policy

    p, rng = _sometimes_negative(), np.random.default_rng(0)
    bad, good = np.array([0.9, 0.5]), np.array([0.2, 0.5])
    y, reason = evaluate_with_policy(p, bad, rng, "record", 0, "log")
    assert y is None and "needs positive components; f1 = -1.0" in reason
    with pytest.raises(ValueError, match=r"the system's output at x=\[0\.9, 0\.5\]: .*f1 = -1\.0"):
        evaluate_with_policy(p, bad, rng, "raise", 0, "log")
    assert evaluate_with_policy(p, bad, rng, "raise", 0, "none")[0] is not None
    assert evaluate_with_policy(p, good, rng, "raise", 0, "log")[0] is not None
    # in a run, such results are failures under "record", never observations
    ds = Optimizer(p, n_init=6, seed=1, outcome_transform="log").run(12, on_error="record")
    assert np.all(ds["y"].values > 0) and ds.sizes["iteration"] == 12


def test_a_g_checked_on_the_system_outputs_is_not_checked_again():
    """``g`` defined only where the components lie: the model problem keeps it as is."""
    p = _positive()
    q = Problem(
        domain=p.domain,
        components=lambda X: 0.5 * p.components(X) / 1.6,
        n_components=2,
        g=lambda F: np.log(1.0 - F).sum(-1),
    )
    opt = Optimizer(q, n_init=4, seed=0, outcome_transform="log")
    X = q.domain.sample(3, seed=0)
    F = q.components(X)
    np.testing.assert_allclose(opt.model_problem.compose(np.log(F), X), q.compose(F, X))
