import signal
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import xarray as xr

from pp_decomp import Box, Optimizer, Problem
from pp_decomp.models import get_problem
from pp_decomp.strategies import STRATEGIES


@pytest.fixture(scope="module")
def small_synthetic():
    return get_problem("synthetic", seed=3, n_components=3, n_points=150)


def test_run_records_history_and_regret(small_synthetic, tmp_path):
    opt = Optimizer(small_synthetic, "d-gpucb", n_init=4, seed=1, checkpoint=tmp_path / "r.nc")
    ds = opt.run(10)
    assert ds["x"].dims == ("iteration", "dim") and ds.sizes["iteration"] == 10
    assert ds["y"].dims == ("iteration", "component") and ds.sizes["component"] == 3
    assert list(ds["phase"].values[:4]) == ["init"] * 4
    assert np.all(np.isfinite(ds["beta"].values[4:])) and np.all(np.isnan(ds["beta"].values[:4]))
    assert np.all(ds["regret"] >= -1e-12)
    np.testing.assert_allclose(ds["cumulative_regret"], np.cumsum(ds["regret"]))
    assert np.all(np.diff(ds["simple_regret"]) <= 0)
    assert ds["ls_mean"].dims == ("iteration", "model", "dim")
    assert np.all(np.isfinite(ds["eta_mean"].values[4:]))
    assert ds["refit"].values[4:].all() and not ds["refit"].values[:4].any()
    assert ds["divergences"].dtype.kind == "i"
    assert ds.attrs["strategy"] == "d-gpucb" and "pymc" in ds.attrs["versions"]
    on_disk = xr.open_dataset(tmp_path / "r.nc")
    np.testing.assert_array_equal(on_disk["x"], ds["x"])
    # self-describing: every variable says what it is; the resume state is not an attribute
    for name, var in on_disk.variables.items():
        assert var.attrs.get("long_name"), name
    numeric = [v for v in on_disk.data_vars if on_disk[v].dtype.kind in "fi"]
    assert all("units" in on_disk[v].attrs for v in numeric)
    assert "acq_value" in on_disk.attrs["sign_convention"]
    assert all(len(str(v)) < 5000 for v in on_disk.attrs.values())


@pytest.mark.parametrize(
    "strategy",
    # the additive strategies need a box; tests/additive/test_additive.py runs each of them;
    # the network ones a function network (tests/network); BoTorch's loops need the
    # compare extra (make test-compare)
    [
        pytest.param(s, marks=[pytest.mark.compare] if st.surrogate == "peer" else [])
        for s, st in sorted(STRATEGIES.items())
        if st.surrogate != "additive" and st.needs.structure != "network"
    ],
)
def test_every_strategy_runs(strategy, small_synthetic):
    # a strategy that learns from hyperparameter draws runs under full Bayes only
    kw = {"inference": "nuts"} if STRATEGIES[strategy].needs.draws else {}
    ds = Optimizer(small_synthetic, strategy, n_init=3, seed=0, mc_samples=64, **kw).run(6)
    assert ds.sizes["iteration"] == 6
    assert np.all(small_synthetic.domain.contains(ds["x"].values))


def test_same_seed_same_choices_and_shared_initial_design(small_synthetic):
    a = Optimizer(small_synthetic, "gp-ucb", n_init=4, seed=7).run(8)
    b = Optimizer(small_synthetic, "gp-ucb", n_init=4, seed=7).run(8)
    c = Optimizer(small_synthetic, "d-gpucb", n_init=4, seed=7).run(8)
    np.testing.assert_array_equal(a["x"], b["x"])
    np.testing.assert_array_equal(a["x"][:4], c["x"][:4])


def test_resume_in_process_matches_uninterrupted(small_synthetic, tmp_path):
    full = Optimizer(small_synthetic, "gp-mi", n_init=3, seed=2, refit_every=2).run(9)
    path = tmp_path / "ck.nc"
    Optimizer(small_synthetic, "gp-mi", n_init=3, seed=2, refit_every=2, checkpoint=path).run(6)
    resumed = Optimizer.resume(path, small_synthetic)
    assert resumed.n == 6 and resumed.gamma > 0
    ds = resumed.run(9)
    np.testing.assert_array_equal(ds["x"], full["x"])
    np.testing.assert_array_equal(ds["y"], full["y"])
    np.testing.assert_allclose(ds["eta_mean"], full["eta_mean"])  # refit history kept


def _named_problem(input_names=None):
    return Problem(
        domain=Box([0.0, 0.0], [1.0, 1.0]),
        components=lambda X: np.c_[np.sin(3 * X[:, 0]), X[:, 1] ** 2],
        n_components=2,
        weights=[1.0, 1.0],
        name="named",
        input_names=input_names,
    )


def test_a_resume_without_input_names_keeps_the_stored_ones(tmp_path):
    path = tmp_path / "ck.nc"
    Optimizer(_named_problem(["dose", "timing"]), n_init=2, checkpoint=path).run(3)
    resumed = Optimizer.resume(path, _named_problem())
    assert resumed.problem.input_names == ["dose", "timing"]
    ds = resumed.run(4)
    assert ds["input_name"].values.tolist() == ["dose", "timing"]
    assert xr.load_dataset(path)["input_name"].values.tolist() == ["dose", "timing"]
    with pytest.raises(ValueError, match=r"input_names \['a', 'b'\] differ from .*\['dose',"):
        Optimizer.resume(path, _named_problem(["a", "b"]))


def test_ask_is_idempotent_and_tell_validates(small_synthetic):
    opt = Optimizer(small_synthetic, "d-gpucb", n_init=2, seed=0)
    x = opt.ask()
    np.testing.assert_array_equal(opt.ask(), x)
    with pytest.raises(ValueError, match=r"y must have 3 column\(s\)"):
        opt.tell(x, [1.0, 2.0])
    with pytest.raises(ValueError, match="y must be finite"):
        opt.tell(x, [1.0, np.nan, 2.0])
    with pytest.raises(ValueError, match="outside the problem's domain"):
        opt.tell([0.1234567], [1.0, 2.0, 3.0])
    with pytest.raises(TypeError, match="y must be numbers; got 'a' at position 0, 'b' at pos"):
        opt.tell(x, ["a", 2.0, "b"])
    with pytest.raises(TypeError, match=r"x must be numbers; got 'left' at position 0"):
        opt.tell(["left"], [1.0, 2.0, 3.0])
    assert opt.n == 0  # rejected tells leave the history untouched
    opt.tell(x, [1.0, 2.0, 3.0])
    other = small_synthetic.domain.X[17]
    opt.tell(other, [0.0, 0.0, 0.0])  # user-chosen evaluation is kept
    assert opt.results()["phase"].values.tolist() == ["init", "user"]


def test_strategy_and_inference_names_are_taken_in_any_case_and_recorded_canonical(
    small_synthetic, tmp_path, capsys
):
    import json

    import xarray as xr

    from pp_decomp.apps.cli import main

    opt = Optimizer(small_synthetic, "D-GPUCB", inference="MAP", n_init=2)
    assert (opt.strategy.name, opt.settings.strategy) == ("d-gpucb", "d-gpucb")
    assert opt.settings.inference.method == "map"
    out = tmp_path / "run.nc"
    args = ["run", "--problem", "gp-sample-2d", "--strategy", "GP-UCB", "--inference", "MAP"]
    assert main([*args, "--init", "2", "--iterations", "3", "--quiet", "--out", str(out)]) == 0
    settings = json.loads(xr.load_dataset(out).attrs["settings"])
    assert (settings["strategy"], settings["inference"]) == ("gp-ucb", "map")
    assert "gp-sample-2d/gp-ucb" in capsys.readouterr().out


def test_optimizer_rejects_bad_settings(small_synthetic):
    with pytest.raises(ValueError, match="strategy must be one of"):
        Optimizer(small_synthetic, "ucb2")
    with pytest.raises(ValueError, match="inference must be one of"):
        Optimizer(small_synthetic, inference="vi")
    with pytest.raises(ValueError, match="n_init must be >= 2"):
        Optimizer(small_synthetic, n_init=1)
    with pytest.raises(ValueError, match="kernel must be one of"):
        Optimizer(small_synthetic, kernel="linear")


def test_continuous_box_with_budget_and_minimisation():
    problem = Problem(
        Box([0, 0], [1, 1], A=[[1, 1]], b=[1.2]),
        lambda X: np.c_[(X[:, 0] - 0.7) ** 2, (X[:, 1] - 0.8) ** 2],
        2,
        g=lambda F, X: np.sqrt(np.abs(F[..., 0] + F[..., 1]) + 0.01),
        maximize=False,
        optimum=float(np.sqrt(0.15**2 * 2 + 0.01)),
        name="bowl",
    )
    for strategy in ("d-gpucb-lipschitz", "d-gpucb-mc"):
        ds = Optimizer(problem, strategy, n_init=5, seed=0, mc_samples=128).run(14)
        assert np.all(ds["x"].values.sum(1) <= 1.2 + 1e-9)
        assert float(ds["simple_regret"][-1]) < 0.1


def test_default_beta_is_the_domains_schedule(small_synthetic, tmp_path):
    from pp_decomp.acquisition import BetaContinuous, BetaDiscrete, BetaKandasamy

    flu = get_problem("flu", seed=0)
    box = Optimizer(flu, "d-gpucb", n_init=3, seed=0).settings.acquisition.beta
    assert box == BetaKandasamy(5) and box(50) == pytest.approx(np.log(100))
    assert isinstance(Optimizer(small_synthetic, "d-gpucb").settings.acquisition.beta, BetaDiscrete)
    # a run stored under the earlier box default resumes with the schedule it ran with
    path = tmp_path / "r.nc"
    Optimizer(flu, "d-gpucb", n_init=3, seed=0, beta=BetaContinuous(5), checkpoint=path).run(3)
    assert Optimizer.resume(path, flu).settings.acquisition.beta == BetaContinuous(5)


# The run kills itself (SIGKILL) once its 8th tell returned: a kill at a chosen point,
# not after a wall-clock wait, which on a busy machine may land anywhere or never.
KILL_AFTER_8 = textwrap.dedent(
    """
    import os, signal, sys
    import pp_decomp.apps.cli
    from pp_decomp.loop.optimizer import Optimizer

    def tell(self, x, y, _tell=Optimizer.tell):
        _tell(self, x, y)
        if self.n == 8:  # its checkpoint written, the 9th input not yet asked
            os.kill(os.getpid(), signal.SIGKILL)

    Optimizer.tell = tell
    sys.exit(pp_decomp.apps.cli.main(sys.argv[1:]))
    """
)


@pytest.mark.slow
def test_sigkill_then_resume_loses_nothing(tmp_path):
    args = [
        "--problem",
        "synthetic",
        "--strategy",
        "d-gpucb",
        "--iterations",
        "14",
        "--init",
        "4",
        "--seed",
        "5",
        "--quiet",
    ]
    cmd = [sys.executable, "-m", "pp_decomp.apps.cli", "run"]
    ref = tmp_path / "ref.nc"
    subprocess.run(cmd + args + ["--out", str(ref)], check=True, capture_output=True)
    out = tmp_path / "killed.nc"
    proc = subprocess.run(
        [sys.executable, "-c", KILL_AFTER_8, "run", *args, "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=600,  # only a hung run: the kill itself comes at tell 8
    )
    assert proc.returncode == -signal.SIGKILL, proc.stderr[-3000:]
    kept = xr.load_dataset(out)
    assert kept.sizes["iteration"] == 8
    subprocess.run(cmd + args + ["--out", str(out), "--resume"], check=True, capture_output=True)
    resumed, reference = xr.load_dataset(out), xr.load_dataset(ref)
    np.testing.assert_array_equal(resumed["x"].values[:8], kept["x"].values)
    np.testing.assert_array_equal(resumed["x"], reference["x"])
    np.testing.assert_array_equal(resumed["y"], reference["y"])


def test_data_told_before_any_ask_count_towards_the_initial_design():
    from pp_decomp import Optimizer
    from pp_decomp.models import get_problem

    problem = get_problem("synthetic", seed=0, n_components=2, n_points=50)
    X = problem.domain.X[:4]
    opt = Optimizer(problem, "d-gpucb", n_init=3, seed=0)
    for x, y in zip(X, problem.evaluate(X, seed=0), strict=True):
        opt.tell(x, y)
    opt.ask()  # four results in hand: the model chooses, no random design point
    assert opt.pending.items[-1][1]["phase"] == "acquisition"
    few = Optimizer(problem, "d-gpucb", n_init=3, seed=0)
    few.tell(X[0], problem.evaluate(X[:1], seed=0)[0])
    few.ask()  # one result: the design's remaining points come first
    assert few.pending.items[-1][1]["phase"] == "init"


def test_each_refit_records_its_hyperparameter_posterior(small_synthetic, tmp_path):
    """mean, sd and the 5% and 95% quantiles of every hyperparameter, per refit, on disk."""
    from pp_decomp import kernels as K

    own = {"f1": K.Matern12() + K.Linear()}
    kw = dict(n_init=4, seed=1, inference="nuts", components=own)
    ds = Optimizer(small_synthetic, "d-gpucb", checkpoint=tmp_path / "r.nc", **kw).run(7)
    post = xr.open_dataset(tmp_path / "r.nc")["hyper_posterior"]
    assert post.dims == ("iteration", "model", "parameter", "statistic")
    assert list(post["statistic"].values) == ["mean", "sd", "q05", "q95"]
    assert {"ls[0]", "eta", "sigma", "ls_0[0]", "eta_0", "eta_1"} <= set(post["parameter"].values)
    refit = ds["refit"].values
    fitted = post.values[refit]  # (fits, parameter, statistic): NaN where a GP lacks one
    mean, sd, lo, hi = (fitted[..., k] for k in range(4))
    have = np.isfinite(mean)
    assert np.all(lo[have] <= mean[have]) and np.all(mean[have] <= hi[have])
    assert np.all(sd[have] > 0)  # full Bayes: draws, not a point
    assert np.all(np.isnan(post.values[~refit]))
    f1 = post.sel(model="f1").values[refit[:, 1]]
    assert np.all(np.isnan(f1[:, list(post["parameter"].values).index("eta")]))


@pytest.mark.parametrize("strategy", ["d-gpucb-mc", "d-gpucb-mc-min", "gp-ucb", "add-gp-ucb"])
def test_per_gp_results_have_one_dimension_under_every_strategy(strategy):
    """``fit_draws`` was on ``component`` under d-gpucb-mc and on ``model`` under
    d-gpucb-mc-min: one name now, a component's GP labelled by the component."""
    problem = Problem(
        domain=Box([0, 0], [1, 1]),
        components=lambda X: np.c_[np.sin(3 * X[:, 0]), X[:, 1] ** 2],
        n_components=2,
        g=lambda F: F[..., 0] * (1 + F[..., 1]),
        component_names=["response", "rate"],
    )
    ds = Optimizer(problem, strategy, n_init=3, seed=0).run(4)
    for var in ("fit_draws", "refit", "converged", "loo_coverage"):
        assert ds[var].dims == ("iteration", "model"), var
    own = {"gp-ucb": ["composed"], "add-gp-ucb": ["additive"]}.get(strategy, [])
    decomposed = [] if own else ["response", "rate"]
    extra = ["composed"] if strategy.endswith("-min") else []
    assert list(ds["model"].values) == decomposed + extra + own
    if decomposed:
        assert ds.fit_draws.sel(model="response").values[-1] == "map"
