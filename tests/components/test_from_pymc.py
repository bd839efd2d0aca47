"""``ComponentGP.from_pymc``: a user's own PyMC model as a component."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pymc as pm
import pytest

import pp_decomp as ppd
from pp_decomp import Prior, Priors
from pp_decomp import kernels as K


def build(X, y):
    with pm.Model() as model:
        ls = pm.LogNormal("ls", mu=1.76, sigma=1.73, shape=2)
        eta = pm.Gamma("eta", alpha=2.0, beta=2.0)
        sigma = pm.LogNormal("sigma", mu=-4.0, sigma=1.5)
        gp = pm.gp.Marginal(cov_func=eta**2 * pm.gp.cov.Matern52(2, ls=ls))
        gp.marginal_likelihood("y_obs", X=X, y=y, sigma=sigma)
    return model, gp


def same_through_kernels():
    kernel = K.Matern52(
        ls=Prior("LogNormal", mu=1.76, sigma=1.73), eta=Prior("Gamma", alpha=2.0, beta=2.0)
    )
    return ppd.ComponentGP(
        kernel,
        bounds=[[0, 0], [1, 1]],
        priors=Priors(mean_sd=0.0),
        noise=Prior("LogNormal", mu=-4.0, sigma=1.5),
    )


@pytest.fixture
def data(rng):
    X = rng.random((20, 2))
    return X, np.sin(6 * X[:, 0]) + 0.3 * X[:, 1] + 0.05 * rng.normal(size=20)


def test_map_fit_and_predictions_are_the_same_model_through_kernels(data):
    X, y = data
    mine = ppd.ComponentGP.from_pymc(build, bounds=[[0, 0], [1, 1]])
    mine.fit(X, y, "map", seed=0, restarts=1)
    ref = same_through_kernels().fit(X, y, "map", seed=0, restarts=1)
    np.testing.assert_allclose(mine.draws.ls, ref.draws.ls, rtol=2e-3)
    np.testing.assert_allclose(mine.draws.sigma, ref.draws.sigma, rtol=2e-3)
    Xnew = np.random.default_rng(5).random((6, 2))
    for a, b in zip(mine.predict(Xnew), ref.predict(Xnew), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-3, atol=1e-6)
    # the batched covariance is PyMC's own
    cm = mine.model
    values = {n: mine.draws.values[n] for n in cm.names}
    K_pymc = build_cov(mine.draws)(Xnew[:3], Xnew).eval()
    np.testing.assert_allclose(cm.matrix(Xnew[:3], Xnew, values)[0], K_pymc, rtol=1e-10)


def build_cov(draws):
    return float(draws.eta[0]) ** 2 * pm.gp.cov.Matern52(2, ls=draws.ls[0])


@pytest.mark.parametrize(
    "bad, match",
    [
        (lambda X, y: pm.Model(), r"must return \(model, gp\)"),
        (lambda X, y: (pm.Model(), "gp"), "must return a pm.gp.Marginal second"),
        (lambda X, y: (pm.Model(), pm.gp.Latent()), "must return a pm.gp.Marginal second"),
    ],
)
def test_a_build_that_returns_no_marginal_gp_is_refused_naming_the_component(bad, match):
    calls = []

    def system(X):
        calls.append(1)
        return np.column_stack([X[:, 0], X[:, 1]])

    problem = ppd.Problem(
        domain=ppd.Box([0, 0], [1, 1]),
        components=system,
        n_components=2,
        g=lambda F: F[..., 0] + F[..., 1],
        component_names=["a", "b"],
    )
    before = len(calls)
    with pytest.raises(
        (TypeError, ValueError), match=rf"component 'b': from_pymc\(build\) {match}"
    ):
        ppd.Optimizer(problem, components={"b": ppd.ComponentGP.from_pymc(bad)})
    assert len(calls) == before


def test_a_half_normal_noise_on_noise_free_data_stops_at_the_search_box():
    # PyMC's GP docs' noise prior: its density rises towards sigma = 0, where an
    # unbounded search ran log(sigma) down until sigma underflowed and the fit failed
    def half_normal_noise(X, y, input_dim):
        with pm.Model() as model:
            ls = pm.InverseGamma("ls", alpha=3, beta=0.6, shape=input_dim)
            eta = pm.Gamma("eta", alpha=2, beta=2)
            gp = pm.gp.Marginal(cov_func=eta**2 * pm.gp.cov.Matern52(input_dim, ls=ls))
            gp.marginal_likelihood("y", X=X, y=y, sigma=pm.HalfNormal("sigma", 0.3))
        return model, gp

    from pp_decomp.components.gp.pymc_gp import LOG_BOX

    X = np.linspace(0, 1, 15)[:, None]
    gp = ppd.ComponentGP.from_pymc(half_normal_noise).fit(X, np.sin(3 * X[:, 0]), seed=0)
    sigma = float(gp.draws.values["sigma"][0])
    assert sigma == pytest.approx(np.exp(LOG_BOX[0]), rel=1e-6)
    mean, var = gp.predict(np.array([[0.5]]))
    assert abs(mean[0] - np.sin(1.5)) < 1e-3 and 0 <= var[0] < 1e-4
    box = gp.model.search_box()
    assert box == [LOG_BOX] * 3 and gp.model.value_names[-1] == "sigma_log__"


def test_a_likelihood_on_other_data_is_refused():
    def elsewhere(X, y):
        with pm.Model() as model:
            gp = pm.gp.Marginal(cov_func=pm.gp.cov.ExpQuad(1, ls=0.3))
            gp.marginal_likelihood("y_obs", X=np.zeros((3, 1)), y=np.zeros(3), sigma=0.1)
        return model, gp

    gp = ppd.ComponentGP.from_pymc(elsewhere, name="r")
    with pytest.raises(ValueError, match="component 'r'.*on the X and y build was given"):
        gp.fit(np.random.default_rng(0).random((4, 1)), np.arange(4.0))


@pytest.mark.slow
def test_a_full_bayes_run_with_a_from_pymc_component_and_its_resume(tmp_path):
    def system(X):
        return np.column_stack([np.sin(5 * X[:, 0]) + X[:, 1], np.cos(3 * X[:, 1])])

    problem = ppd.Problem(
        domain=ppd.Box([0, 0], [1, 1]),
        components=system,
        n_components=2,
        g=lambda F: F[..., 0] + F[..., 1],
        component_names=["a", "b"],
        name="pymc-two",
    )
    path = tmp_path / "run.nc"
    mine = {"a": ppd.ComponentGP.from_pymc(build)}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # small fits' diagnostics
        opt = ppd.Optimizer(
            problem, "d-gpucb-mc", inference="nuts", components=mine, checkpoint=path, seed=0
        )
        opt.run(15)
    assert opt.n == 15 and opt.settings.inference.fast
    recorded = json.loads(opt.results().attrs["settings"])["components"]["a"]
    assert (
        recorded["pymc"].endswith("test_from_pymc.build") and "ls ~ LogNormal" in recorded["model"]
    )
    with pytest.raises(ValueError, match=r"component\(s\) \['a'\] have their own PyMC models"):
        ppd.Optimizer.resume(path, problem)
    again = ppd.Optimizer.resume(path, problem, components=mine)
    assert again.n == 15


def build_every_transform(X, y, input_dim):
    """A user's model whose free variables take each transform PyMC applies: log
    (a vector with ``shape`` and scalars), interval (log-odds) and none; its
    likelihood named ``y`` as PyMC's GP docs write it."""
    with pm.Model() as model:
        ls = pm.InverseGamma("ls", alpha=3, beta=0.6, shape=input_dim)
        eta = pm.Gamma("eta", alpha=2, beta=2)
        mix = pm.Uniform("mix", 0.05, 0.95)
        level = pm.Normal("level", 0.0, 0.5)
        smooth = pm.gp.cov.Matern52(input_dim, ls=ls)
        rough = pm.gp.cov.ExpQuad(input_dim, ls=ls)
        cov = eta**2 * (mix * smooth + (1 - mix) * rough) + pm.gp.cov.Constant(level**2)
        gp = pm.gp.Marginal(cov_func=cov)
        gp.marginal_likelihood("y", X=X, y=y, sigma=pm.HalfNormal("sigma", 0.3))
    return model, gp


@pytest.fixture
def data3():
    rng = np.random.default_rng(1)
    X = rng.uniform(size=(30, 3))
    return X, np.sin(3 * X[:, 0]) + X[:, 1] * X[:, 2] + 0.05 * rng.normal(size=30)


@pytest.mark.slow
def test_every_fit_path_of_a_user_model_with_every_kind_of_transform(data3):
    from pp_decomp.components.inference.importance import prior_importance_fit
    from pp_decomp.components.inference.laplace import laplace_fit, laplace_mode
    from pp_decomp.components.inference.refresh import refresh_fit

    X, y = data3
    Xnew = np.random.default_rng(2).uniform(size=(5, 3))
    gp = ppd.ComponentGP.from_pymc(build_every_transform, name="mine")
    names = ["ls", "eta", "mix", "level", "sigma"]

    def finite_predictions():
        mean, sd = gp.predict(Xnew)
        assert np.all(np.isfinite(mean)) and np.all(sd > 0)
        assert set(names) <= set(gp.draws.values)
        return mean

    gp.fit(X, y, "map", seed=0)
    at_mode = finite_predictions()
    assert gp.draws.values["ls"].shape == (1, 3) and 0.05 < gp.draws.values["mix"][0] < 0.95
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        gp.fit(X, y, "nuts", seed=0)  # the chains, then (if they fail) their weights
        assert gp.diagnostics.converged
        full = gp.draws
        np.testing.assert_allclose(finite_predictions(), at_mode, atol=0.2)
        # a short run fails R-hat; its chains are reweighted (the user's crash)
        gp.fit(X, y, "nuts", seed=1, draws=40, tune=20)
    assert gp.diagnostics.reweighted and gp.diagnostics.converged
    assert "reweighted_posterior" in gp.idata.children
    finite_predictions()
    assert set(names) <= set(gp.summary().index.str.replace(r"\[\d+\]", "", regex=True))
    # the fast path's fits: prior, posterior and Laplace importance
    assert prior_importance_fit(gp, X[:8], y[:8], 4096, 128, 0.7, np.random.default_rng(0))
    assert gp.diagnostics.proposal == "prior"
    finite_predictions()
    assert refresh_fit(gp, X, y, full, 128, np.random.default_rng(0))
    assert gp.diagnostics.proposal == "posterior"
    finite_predictions()
    z, cov = laplace_mode(gp, X, y, np.random.default_rng(0))
    assert z.shape == (7,) and np.all(np.linalg.eigvalsh(cov) > 0)
    laplace_fit(gp, X, y, 128, np.random.default_rng(0))  # passes, or stays at the mode
    assert gp.diagnostics.proposal == "laplace" or gp.diagnostics.inference == "map"
    finite_predictions()


def build_plain(X, y, input_dim):
    with pm.Model() as model:
        ls = pm.InverseGamma("ls", alpha=3, beta=0.6, shape=input_dim)
        eta = pm.Gamma("eta", alpha=2, beta=2)
        cov = eta**2 * pm.gp.cov.Matern52(input_dim, ls=ls)
        gp = pm.gp.Marginal(cov_func=cov)
        gp.marginal_likelihood("y", X=X, y=y, sigma=pm.HalfNormal("sigma", 0.3))
    return model, gp


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_short_nuts_fit_of_a_user_model_is_reweighted_not_a_crash(data3, seed):
    """The user's report: ``fit(X, y, "nuts", draws=60, tune=30)`` raised
    ``KeyError: 'Could not find node at ls_log__'`` where the chains were weighed."""
    X, y = data3
    gp = ppd.ComponentGP.from_pymc(build_plain)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        gp.fit(X, y, "nuts", seed=seed, draws=60, tune=30)
    assert gp.draws.values["ls"].shape[1] == 3 and np.all(np.isfinite(gp.predict(X[:3])[1]))


def test_a_build_may_name_its_likelihood_y_and_take_the_column_count():
    X = np.random.default_rng(0).random((6, 3))
    gp = ppd.ComponentGP.from_pymc(build_plain).fit(X, X.sum(1), "map", seed=0, restarts=1)
    assert gp.model.root.observed_RVs[0].name == "y" and gp.draws.values["ls"].shape == (1, 3)


def test_a_build_that_reads_the_column_count_off_X_is_told_to_take_it():
    def symbolic(X, y):
        with pm.Model() as model:
            gp = pm.gp.Marginal(cov_func=pm.gp.cov.Matern52(X.shape[1], ls=1.0))
            gp.marginal_likelihood("y", X=X, y=y, sigma=0.1)
        return model, gp

    gp = ppd.ComponentGP.from_pymc(symbolic, name="r")
    with pytest.raises(TypeError, match=r"component 'r'.*build\(X, y, input_dim\).*here 2"):
        gp.fit(np.random.default_rng(0).random((4, 2)), np.arange(4.0))


def test_input_dim_goes_only_to_a_build_that_asks_for_it():
    from pp_decomp.components.gp.pymc_gp import call_build

    def got(*args, **kwargs):
        return args, kwargs

    def plain(X, y):
        return got(X, y)

    def with_default(X, y, jitter=1e-6):
        return got(X, y, jitter)

    def keyword_only(X, y, *, prior=None):
        return got(X, y, prior)

    def any_keywords(X, y, **kw):
        return got(X, y, **kw)

    def asks(X, y, input_dim):
        return got(X, y, input_dim)

    def by_name(X, y, *, input_dim):
        return got(X, y, input_dim)

    assert call_build(plain, "X", "y", 3, "c") == (("X", "y"), {})
    assert call_build(with_default, "X", "y", 3, "c") == (("X", "y", 1e-6), {})
    assert call_build(keyword_only, "X", "y", 3, "c") == (("X", "y", None), {})
    assert call_build(any_keywords, "X", "y", 3, "c") == (("X", "y"), {})
    assert call_build(asks, "X", "y", 3, "c") == (("X", "y", 3), {})
    assert call_build(by_name, "X", "y", 3, "c") == (("X", "y", 3), {})


def noise_named_noise(amplitude: str):
    """A build whose noise is ``noise`` and whose amplitude is named ``amplitude``."""

    def build_it(X, y, input_dim):
        with pm.Model() as model:
            ls = pm.InverseGamma("ls", alpha=3, beta=0.6, shape=input_dim)
            eta = pm.HalfNormal(amplitude, 1.0)
            gp = pm.gp.Marginal(cov_func=eta**2 * pm.gp.cov.ExpQuad(input_dim, ls=ls))
            gp.marginal_likelihood("y", X=X, y=y, sigma=pm.HalfNormal("noise", 0.2))
        return model, gp

    return build_it


@pytest.mark.slow
def test_a_noise_named_otherwise_than_sigma_is_the_noise_under_nuts():
    """The user's report: a model whose noise is ``pm.HalfNormal("noise", ...)`` ran
    under MAP and crashed at its first NUTS fit with "sigma must be (S,) values > 0"."""

    X = np.linspace(0, 1, 12)[:, None]
    y = np.sin(4 * X[:, 0]) + 0.05 * np.random.default_rng(0).normal(size=12)
    gp = ppd.ComponentGP.from_pymc(noise_named_noise("amp"), max_draws=64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        gp.fit(X, y, "nuts", seed=0, draws=100, tune=100, chains=2)
    values = gp.draws.values
    assert values["noise"].shape == (64,)
    np.testing.assert_allclose(values["sigma"], values["noise"], rtol=1e-12)
    mean, sd = gp.predict(X[:3])
    assert np.all(np.isfinite(mean)) and np.all(sd > 0)


def test_a_variable_named_sigma_that_is_not_the_noise_is_refused_before_any_evaluation():
    # the draws name the noise sd "sigma": the amplitude's draws were overwritten by it
    amplitude_named_sigma = noise_named_noise("sigma")
    calls = []
    problem = ppd.Problem(
        domain=ppd.Box([0, 0], [1, 1]),
        components=lambda X: calls.append(1) or np.column_stack([X[:, 0], X[:, 1]]),
        n_components=2,
        g=lambda F: F[..., 0] + F[..., 1],
        component_names=["a", "b"],
    )
    mine, before = ppd.ComponentGP.from_pymc(amplitude_named_sigma), len(calls)
    with pytest.raises(ValueError, match="component 'b'.*'sigma' is not the likelihood's noise"):
        ppd.Optimizer(problem, components={"b": mine})
    assert len(calls) == before


def _named(fn, module: str, qualname: str):
    """``fn`` as defined in ``module`` under ``qualname`` (a script's: ``__main__``)."""

    def wrapped(X, y, input_dim):
        return fn(X, y, input_dim) if fn is not build else fn(X, y)

    wrapped.__module__, wrapped.__qualname__ = module, qualname
    return wrapped


def _script_problem():
    return ppd.Problem(
        domain=ppd.Box([0, 0], [1, 1]),
        components=lambda X: np.column_stack([np.sin(5 * X[:, 0]), X[:, 1]]),
        n_components=2,
        g=lambda F: F[..., 0] + F[..., 1],
        component_names=["a", "b"],
        name="script",
    )


def _main_module(monkeypatch, path):
    import sys
    import types

    main = types.ModuleType("__main__")
    if path is not None:
        main.__file__ = path
    monkeypatch.setitem(sys.modules, "__main__", main)


def test_a_run_made_by_a_script_resumes_with_its_models_imported_from_the_script(
    tmp_path, monkeypatch
):
    """The user's report: a run made by ``python plant.py`` recorded its build as
    ``__main__.build``; ``pp-decomp report ... --components plant:components`` imports
    it as ``plant.build``, and was refused as another model."""
    problem, path = _script_problem(), tmp_path / "run.nc"
    _main_module(monkeypatch, "/home/me/plant.py")
    script = {"a": ppd.ComponentGP.from_pymc(_named(build_plain, "__main__", "build_plain"))}
    opt = ppd.Optimizer(problem, components=script, checkpoint=path, n_init=3, seed=0)
    opt.run(3)
    assert json.loads(opt.results().attrs["settings"])["components"]["a"]["pymc"] == (
        "plant.build_plain"
    )
    imported = {"a": ppd.ComponentGP.from_pymc(_named(build_plain, "plant", "build_plain"))}
    assert ppd.Optimizer.resume(path, problem, components=imported).n == 3
    # another model under the same name is still another model, and says where
    other = {"a": ppd.ComponentGP.from_pymc(_named(build, "plant", "build_plain"))}
    with pytest.raises(ValueError, match="whose models differ: file 'ls ~ InverseGamma"):
        ppd.Optimizer.resume(path, problem, components=other)


def test_a_file_that_names_a_build_by_main_takes_a_top_level_modules_build_of_that_name(
    tmp_path, monkeypatch
):
    # a notebook's build is __main__'s (and a script's was, before it took the script's name)
    problem, path = _script_problem(), tmp_path / "run.nc"
    _main_module(monkeypatch, None)
    notebook = {"a": ppd.ComponentGP.from_pymc(_named(build_plain, "__main__", "build_plain"))}
    ppd.Optimizer(problem, components=notebook, checkpoint=path, n_init=3, seed=0).run(3)
    moved = {"a": ppd.ComponentGP.from_pymc(_named(build_plain, "mine", "build_plain"))}
    assert ppd.Optimizer.resume(path, problem, components=moved).n == 3
    for module, qualname in [("pkg", "Cls.build_plain"), ("m", "make.<locals>.build_plain")]:
        elsewhere = {"a": ppd.ComponentGP.from_pymc(_named(build_plain, module, qualname))}
        with pytest.raises(ValueError, match="component 'a''s model"):
            ppd.Optimizer.resume(path, problem, components=elsewhere)


def test_a_new_build_never_gets_a_dead_builds_compiled_model():
    """A CI failure: the compiled cache keyed a build by ``id``, and a build made after
    an earlier one was collected could take its id, and with it its model (a notebook
    redefining ``build`` is the user's case)."""
    import gc

    def make(lognormal: bool):
        def build(X, y, input_dim):
            with pm.Model() as model:
                if lognormal:
                    ls = pm.LogNormal("ls", 0.0, 1.0, shape=input_dim)
                else:
                    ls = pm.InverseGamma("ls", 3.0, 0.6, shape=input_dim)
                gp = pm.gp.Marginal(cov_func=pm.gp.cov.Matern52(input_dim, ls=ls))
                gp.marginal_likelihood("y", X=X, y=y, sigma=pm.HalfNormal("sigma", 0.3))
            return model, gp

        return build

    for i in range(20):  # the id was reused within 4 builds before the fix
        gp = ppd.ComponentGP.from_pymc(make(i % 2 == 0), input_dim=1)
        family = str(gp.model.root["ls"].owner.op)
        assert ("lognormal" if i % 2 == 0 else "invgamma") in family, (i, family)
        del gp
        gc.collect()
