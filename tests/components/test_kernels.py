"""The open model layer: kernel families and expressions, priors, and the general
engine checked against PyMC's own covariances and model."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pymc as pm
import pytest

import pp_decomp as ppd
from pp_decomp import Prior
from pp_decomp import kernels as K
from pp_decomp.prior import NATIVE, as_prior, log_prior

ROOT = Path(__file__).resolve().parents[2]


class Cauchy(K.Stationary):
    """A family defined here alone: ``c = 1 / (1 + r²)``."""

    @staticmethod
    def correlation(r2):
        return 1.0 / (1.0 + r2)

    @staticmethod
    def gradient(r2):
        return (-1.0 / (1.0 + r2) ** 2,)

    def pymc_cov(self, input_dim, active_dims, values):
        # RatQuad with α = 1 is (1 + r²/2)⁻¹: the same with ℓ/√2
        ls = values["ls"] / np.sqrt(2.0)
        return pm.gp.cov.RatQuad(input_dim, alpha=1.0, ls=ls, active_dims=active_dims)


EXPRESSIONS = [
    K.ExpQuad(),
    K.Matern12(),
    K.Matern32(),
    K.Matern52(),
    K.RatQuad(),
    K.Periodic(period=0.7, active_dims=[1]),
    K.Linear(c=0.2),
    K.Constant(),
    Cauchy(),
    K.ExpQuad() + K.Periodic(period=1.0, active_dims=[0]),
    K.Matern52() * K.Periodic(active_dims=[1]),
    (K.Matern12() + K.Linear()) * K.ExpQuad(active_dims=[0]),
    K.Warped(K.Matern32()),
    K.Warped(K.RatQuad(), warp_b=1.0),
    K.Warped(K.ExpQuad(active_dims=[1])) * K.Matern52(active_dims=[0]),
]


def _perturbed(bound, rng):
    theta = bound.theta0 * np.exp(rng.normal(0.0, 0.3, bound.n_params))
    values = {}
    for f in bound.free:
        v = theta[list(f.slots)]
        values[f.name] = v if bound.shapes[f.name] else float(v[0])
    return theta, values


@pytest.mark.parametrize("kernel", EXPRESSIONS, ids=repr)
def test_kernel_matches_pymc_and_its_gradient(kernel, rng):
    bound = K.BoundKernel(kernel, 2, widths=[2.0, 1.0])
    X1, X2 = rng.random((6, 2)), rng.random((4, 2))
    theta, values = _perturbed(bound, rng)
    bound.theta0 = theta  # the fixed parameters stay as given
    K_ours = bound.matrix(X1, X2, theta[None])[0]
    K_pymc = bound.to_pymc(values)(X1, X2).eval()
    np.testing.assert_allclose(K_ours, K_pymc, rtol=1e-9, atol=1e-11)
    g = np.zeros(bound.n_params)
    bound.kfun(X1[0], X2[1], theta, g)
    for q in range(bound.n_params):
        e = np.zeros(bound.n_params)
        e[q] = 1e-6
        up = bound.kfun(X1[0], X2[1], theta + e, np.zeros(bound.n_params))
        down = bound.kfun(X1[0], X2[1], theta - e, np.zeros(bound.n_params))
        assert g[q] == pytest.approx((up - down) / 2e-6, rel=1e-5, abs=1e-8)
    np.testing.assert_allclose(
        bound.diag(X1, theta[None])[0], np.diag(bound.matrix(X1, X1, theta[None])[0])
    )


def test_expressions_name_their_hyperparameters():
    assert K.BoundKernel(K.Matern52(), 3).names == ["ls", "eta"]
    both = K.BoundKernel(K.ExpQuad() + K.Periodic(period=1.0, active_dims=[0]), 2)
    assert both.names == ["ls_0", "eta_0", "ls_1", "eta_1"]  # the period is fixed
    # a product has one scale: the second factor's amplitude is fixed at 1
    assert K.BoundKernel(K.Matern52() * K.Periodic(active_dims=[0]), 2).names == [
        "ls_0",
        "eta_0",
        "ls_1",
        "period_1",
    ]
    # and the user's factor keeps its own
    p = K.Periodic(active_dims=[0])
    _ = K.Matern52() * p
    assert "eta" not in p.values


def test_period_is_in_input_units():
    bound = K.BoundKernel(K.Periodic(period=24.0, active_dims=[0]), 2, widths=[240.0, 1.0])
    assert bound.theta0[1] == pytest.approx(0.1)  # 24 h on a 240 h box: a tenth of it
    priored = K.Periodic(period=Prior("LogNormal", mu=np.log(24.0), sigma=0.1), active_dims=[0])
    prior = K.BoundKernel(priored, 2, widths=[240.0, 1.0]).free[1].prior
    assert np.exp(prior.parameters["mu"]) == pytest.approx(0.1)


def test_kernels_on_other_boxes_share_their_compiled_code_and_keep_their_values(rng):
    # a network node's GP is rebuilt on its parents' new range at every refit: one
    # compile for all, each with its own box (the period is in input units)
    k = K.Matern52(active_dims=[0]) + K.Periodic(period=0.5, active_dims=[1])
    a, b = K.BoundKernel(k, 2, [1.0, 1.0]), K.BoundKernel(k, 2, [1.0, 4.0])
    assert a.kfun is b.kfun and a._matrix is b._matrix and a._diag is b._diag
    X = rng.random((4, 2))
    th_a, th_b = a.theta0[None], b.theta0[None]
    assert not np.allclose(th_a, th_b)
    np.testing.assert_allclose(
        b.matrix(X, X, th_b), K.BoundKernel(k, 2, [1.0, 4.0]).matrix(X, X, th_b)
    )
    assert not np.allclose(a.matrix(X, X, th_a), b.matrix(X, X, th_b))
    # other dimensions or another family are other code
    assert (
        K.BoundKernel(K.Matern52(active_dims=[1]) + K.Periodic(period=0.5, active_dims=[0]), 2).kfun
        is not a.kfun
    )
    assert (
        K.BoundKernel(K.Matern32(active_dims=[0]) + K.Periodic(period=0.5, active_dims=[1]), 2).kfun
        is not a.kfun
    )


def test_kernel_round_trips_through_its_dict():
    k = K.Matern12(ls=Prior("InverseGamma", alpha=3, beta=0.6)) + K.Periodic(
        period=1.0, active_dims=[0]
    ) * K.Linear(c=0.1)
    again = K.Kernel.from_dict(json.loads(json.dumps(k.to_dict())))
    assert again.to_dict() == k.to_dict()
    assert repr(again) == repr(k)


@pytest.mark.parametrize("family", sorted(NATIVE))
def test_native_priors_match_pymc(family):
    kwargs = {
        "LogNormal": dict(mu=0.3, sigma=0.7),
        "Gamma": dict(alpha=2.5, beta=1.5),
        "InverseGamma": dict(alpha=3.0, beta=0.6),
        "HalfNormal": dict(sigma=0.4),
        "HalfCauchy": dict(beta=0.8),
        "Exponential": dict(lam=2.0),
        "Normal": dict(mu=0.2, sigma=1.3),
    }[family]
    prior = Prior(family, **kwargs)
    assert prior.is_native and Prior.from_dict(prior.to_dict()) == prior
    for z in (-1.3, 0.2, 1.1):
        theta = np.exp(z) if prior.positive else z
        ref = float(pm.logp(prior.to_pymc_dist(), theta).eval())
        value, grad = log_prior(*prior.encoded(), z)
        # PyMC's HalfCauchy is 6e-9 off scipy's (ours agrees with scipy to 1e-16)
        assert value == pytest.approx(ref, rel=1e-8)
        up, down = (
            log_prior(*prior.encoded(), z + 1e-6)[0],
            log_prior(*prior.encoded(), z - 1e-6)[0],
        )
        assert grad == pytest.approx((up - down) / 2e-6, rel=1e-5, abs=1e-8)


def test_prior_accepts_pymc_extras_form_and_refuses_bad_input():
    class Extras:  # pymc_extras.prior.Prior's public form
        def to_dict(self):
            return {"dist": "Gamma", "kwargs": {"alpha": 2, "beta": 3}}

    assert as_prior(Extras(), "ls") == Prior("Gamma", alpha=2.0, beta=3.0)
    with pytest.raises(ValueError, match="unknown PyMC distribution 'Gama'"):
        Prior("Gama", alpha=2, beta=3)
    with pytest.raises(ValueError, match="sigma must be a finite number > 0; got -1.0"):
        Prior("HalfNormal", sigma=-1)
    with pytest.raises(ValueError, match="Matern52 has no parameter 'period'"):
        K.Matern52(period=Prior("LogNormal", mu=0, sigma=1))
    with pytest.raises(ValueError, match="ls is positive but its prior"):
        K.BoundKernel(K.Matern52(ls=Prior("Normal", mu=0, sigma=1)), 2)
    with pytest.raises(TypeError, match="must be a pp_decomp.Prior"):
        K.Matern52(ls="lognormal")


def _pymc_check(gp, X, y, grad_rtol: float = 1e-6):
    """The general engine's density (value and gradient, Jacobian included) against
    PyMC's compiled model at a few points (the gradients to ``grad_rtol``)."""
    Xs, ys = gp._set_data(X, y)
    cm = gp._compiled()
    model = gp.pymc_model(Xs, ys)
    logp = model.compile_logp(jacobian=True)
    dlogp = model.compile_dlogp(jacobian=True)
    names = [v.name for v in model.value_vars]
    rng = np.random.default_rng(3)
    for _ in range(3):
        z = cm.center() + rng.normal(0, 0.3, cm.ndim)
        point = {n: np.asarray(v[0]) for n, v in cm.unflatten(z[None]).items()}
        value, grad = cm.density(z, np.ascontiguousarray(Xs), np.ascontiguousarray(ys), True)
        assert value == pytest.approx(float(logp(point)), rel=1e-9)
        ref = dlogp(point)  # flat in the model's value-variable order
        ours = np.concatenate([np.atleast_1d(cm.unflatten(grad[None])[n][0]) for n in names])
        np.testing.assert_allclose(ours, ref, rtol=grad_rtol, atol=1e-8)


def test_general_engine_density_is_the_pymc_model(rng):
    X = rng.random((12, 2))
    y = np.sin(6 * X[:, 0]) + 0.3 * X[:, 1]
    gp = ppd.ComponentGP(
        K.ExpQuad() + K.Periodic(period=0.5, active_dims=[0]),
        noise=Prior("HalfNormal", sigma=0.1),
        bounds=[[0, 0], [1, 1]],
    )
    assert type(gp).__name__ == "KernelGP"
    _pymc_check(gp, X, y)


def test_a_prior_numba_does_not_know_runs_through_pymc(rng):
    X = rng.random((10, 1))
    y = np.cos(4 * X[:, 0])
    gp = ppd.ComponentGP(K.Matern32(ls=Prior("Weibull", alpha=2.0, beta=0.5)), bounds=[[0], [1]])
    with pytest.warns(UserWarning, match=r"priors \['Weibull'\] are evaluated by PyMC"):
        _pymc_check(gp, X, y)
    gp.fit(X, y, "map", seed=0)
    assert gp.draws.ls.shape == (1, 1)


def test_built_in_shapes_stay_on_the_built_in_engine():
    assert type(ppd.ComponentGP(K.Matern52())).__name__ == "ComponentGP"
    gp = ppd.ComponentGP(K.Matern52(ls=Prior("LogNormal", mu=1.0, sigma=0.5)), input_dim=4)
    assert gp.kernel == "matern52"
    assert gp.priors.ls_log_center(4) == pytest.approx(1.0)  # the same median as asked
    assert type(ppd.ComponentGP(K.Matern52(active_dims=[0]))).__name__ == "KernelGP"
    assert type(ppd.ComponentGP(K.Matern52(ls=0.3))).__name__ == "KernelGP"  # fixed ℓ


def test_a_family_defined_in_a_test_file_fits_map_nuts_and_the_fast_path(rng):
    X = rng.random((14, 2))
    y = 1.0 / (1.0 + 4 * ((X - 0.4) ** 2).sum(1))
    gp = ppd.ComponentGP(Cauchy(), bounds=[[0, 0], [1, 1]])
    _pymc_check(gp, X, y)
    gp.fit(X, y, "map", seed=0)
    mean, var = gp.predict(X[:3])
    np.testing.assert_allclose(mean, y[:3], atol=0.05)
    gp.fit(X, y, "nuts", seed=1, draws=100, tune=100, chains=2, repairs=0, warn=False)
    assert gp.draws.ls.shape[1] == 2 and gp.idata is not None

    def components(Z):
        return np.column_stack([1.0 / (1.0 + 4 * ((Z - 0.4) ** 2).sum(1)), Z[:, 0]])

    problem = ppd.Problem(
        domain=ppd.CandidateSet(rng.random((40, 2))),
        components=components,
        n_components=2,
        g=lambda F: F[..., 0] + F[..., 1],
        name="cauchy",
    )
    opt = ppd.Optimizer(
        problem, "d-gpucb-mc", inference="nuts", components=[Cauchy(), None], seed=0
    )
    assert opt.settings.inference.fast
    opt.run(8)
    assert len(opt.X) == 8


def test_the_matern52_formula_is_written_once():
    """One definition (kernels/families.py); every other path calls it."""
    pattern = re.compile(r"5\.0 / 3\.0|5 / 3|SQRT5 \* r")
    hits = [
        f"{p.relative_to(ROOT)}:{i}"
        for p in (ROOT / "pp_decomp").rglob("*.py")
        for i, line in enumerate(p.read_text().splitlines(), 1)
        if pattern.search(line) and not line.lstrip().startswith(("*", "``", '"""'))
    ]
    assert hits and all(h.startswith("pp_decomp/kernels/families.py") for h in hits), hits


def test_bad_models_are_refused_before_any_evaluation(rng):
    calls = []

    def components(Z):
        calls.append(len(Z))
        return np.column_stack([Z[:, 0], 1.0 + Z[:, 1]])

    problem = ppd.Problem(
        domain=ppd.Box([0, 0], [1, 1]),
        components=components,
        n_components=2,
        g=lambda F: F[..., 0] + F[..., 1],
        name="two",
        component_names=["a", "b"],
    )
    before = len(calls)
    with pytest.raises(ValueError, match=r"component 'b': Matern52's active_dims \[2\] exceed"):
        ppd.Optimizer(problem, components={"b": K.Matern52(active_dims=[2])})
    with pytest.raises(ValueError, match=r"\['c'\] are not components of problem 'two'"):
        ppd.Optimizer(problem, components={"c": K.Matern52()})
    with pytest.raises(ValueError, match="components has 1 model"):
        ppd.Optimizer(problem, components=[K.Matern52()])
    with pytest.raises(ValueError, match="transform must be one of"):
        ppd.ComponentGP(K.Matern52(), transform="sqrt", name="a")
    with pytest.raises(
        ValueError, match=r"component 'a': transform='log' needs y > 0; got y\[1\] = 0.0"
    ):
        ppd.ComponentGP(K.Matern52(), transform="log", name="a").fit(
            rng.random((3, 2)), np.array([1.0, 0.0, 2.0])
        )
    assert len(calls) == before
    # a log-transformed component's non-positive observation is refused at tell, kept out
    opt = ppd.Optimizer(problem, components={"a": ppd.ComponentGP("se", transform="log")}, n_init=2)
    with pytest.raises(ValueError, match="a = -0.5"):
        opt.tell([0.5, 0.5], [-0.5, 1.0])
    assert opt.n == 0
