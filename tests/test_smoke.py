"""The smoke subset: what .ci/run also runs on the declared lower bounds
(lower-bounds.txt), so that a range pyproject.toml declares is a range that was
tested. Import, a NUTS fit checked by arviz-stats, a 10-step full-Bayes run on
a box, resume, and the results file opened by xarray."""

import numpy as np
import pytest
import xarray as xr

pytestmark = pytest.mark.smoke


def _problem():
    import pp_decomp as ppd

    return ppd.Problem(
        domain=ppd.Box([0, 0], [1, 1], A=[[1, 1]], b=[1.5]),
        components=lambda X: np.c_[np.sin(3 * X[:, 0]), X[:, 1] ** 2],
        n_components=2,
        g=lambda F, X: F[..., 0] * (1 + F[..., 1]),
        name="smoke",
    )


def test_import_names_the_stack():
    import pp_decomp
    from pp_decomp.results import package_versions

    found = package_versions()
    for name in ("pymc", "pytensor", "arviz", "nutpie", "numpy", "xarray"):
        assert found[name], name
    assert pp_decomp.Optimizer is not None


def test_a_nuts_fit_is_a_posterior_arviz_reads():
    import arviz_stats

    from pp_decomp import ComponentGP

    rng = np.random.default_rng(0)
    X = rng.uniform(size=(12, 1))
    y = np.sin(4 * X[:, 0]) + 0.05 * rng.standard_normal(12)
    gp = ComponentGP("se", 1, name="f").fit(X, y, inference="nuts", seed=1, draws=200, tune=200)
    assert gp.diagnostics.inference == "nuts" and gp.draws.n_draws > 1
    tree = gp.idata
    assert {"posterior", "sample_stats"} <= set(tree.children)
    table = arviz_stats.summary(tree, var_names=["ls", "eta", "sigma"])
    assert np.all(np.isfinite(table["ess_bulk"].astype(float)))
    mean, var = gp.predict(rng.uniform(size=(5, 1)))
    assert mean.shape == (5,) and np.all(var > 0)


def test_a_full_bayes_run_on_a_box_resumes_and_its_file_opens(tmp_path):
    from pp_decomp import Optimizer

    problem, path = _problem(), tmp_path / "run.nc"
    opt = Optimizer(problem, "d-gpucb-mc", inference="nuts", n_init=4, seed=0, checkpoint=path)
    opt.run(6)
    resumed = Optimizer.resume(path, problem)
    ds = resumed.run(10)
    assert ds.sizes["iteration"] == 10
    on_disk = xr.open_dataset(path)
    assert on_disk.sizes["iteration"] == 10
    np.testing.assert_array_equal(on_disk["x"].values, ds["x"].values)
    assert np.all(np.isfinite(on_disk["objective"].values))
    on_disk.close()


def test_own_component_models_fit_by_nuts():
    """A kernel expression (the general engine) and a user's PyMC model
    (nutpie's PyMC path, PyTensor's vectorize_graph), each fitted by NUTS."""
    import pymc as pm

    from pp_decomp import ComponentGP, Prior
    from pp_decomp import kernels as K

    rng = np.random.default_rng(1)
    X = rng.random((12, 2))
    y = np.sin(6 * X[:, 0]) + X[:, 1]

    def build(X, y):
        with pm.Model() as model:
            ls = pm.InverseGamma("ls", alpha=3, beta=0.6, shape=2)
            gp = pm.gp.Marginal(cov_func=pm.gp.cov.Matern32(2, ls=ls))
            gp.marginal_likelihood("y_obs", X=X, y=y, sigma=pm.HalfNormal("sigma", 0.1))
        return model, gp

    kernel = K.Matern12(ls=Prior("InverseGamma", alpha=3, beta=0.6)) + K.Periodic(
        period=0.5, active_dims=[0]
    )
    for gp in (ComponentGP(kernel), ComponentGP.from_pymc(build)):
        gp.fit(X, y, "nuts", seed=0, draws=100, tune=100, chains=2, repairs=0, warn=False)
        mean, var = gp.predict(X[:3])
        assert np.all(np.isfinite(mean)) and np.all(var >= 0)
        assert gp.idata["posterior"].sizes["chain"] == 2
