"""The main job's pictures and report: pp-decomp demo, pp-decomp report, run_pictures,
ppd.report and Optimizer.report (a run made in Python included)."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import pp_decomp as ppd
from pp_decomp.apps.cli import main
from pp_decomp.apps.cli.user_code import load_components
from pp_decomp.apps.report_pictures import run_pictures
from pp_decomp.models import get_problem

PICTURES = {"component.png", "objective.png", "hyperparameters.png", "diagnostics.png"}

# a user's problem module, as README's "A first run" makes one (a nonlinear g, no seed)
TINY = """
import numpy as np
import pp_decomp as ppd


def make():
    return ppd.Problem(
        domain=ppd.Box([0.0], [1.0]),
        components=lambda X: np.c_[np.sin(3 * X[:, 0]), X[:, 0] ** 2],
        n_components=2,
        g=lambda F, X: F[..., 0] * (1 + F[..., 1]),
        optimum=1.3269083216938,  # so the file stores the regret
        name="tiny",
    )
"""


# the same problem with a component model of the user's own PyMC code
OWN_PYMC = (
    TINY
    + """
import pymc as pm


def build(X, y):
    with pm.Model() as model:
        ls = pm.LogNormal("ls", mu=-1.0, sigma=1.0)
        eta = pm.Gamma("eta", alpha=2.0, beta=2.0)
        sigma = pm.LogNormal("sigma", mu=-4.0, sigma=1.5)
        gp = pm.gp.Marginal(cov_func=eta**2 * pm.gp.cov.Matern52(1, ls=ls))
        gp.marginal_likelihood("y_obs", X=X, y=y, sigma=sigma)
    return model, gp


COMPONENTS = {"f0": ppd.ComponentGP.from_pymc(build)}
"""
)


def _cli(args: list[str], cwd) -> subprocess.CompletedProcess:
    """``pp-decomp ARGS`` in folder ``cwd`` as the installed command runs: ``-P`` leaves
    the current folder off ``sys.path``, and PYTHONPATH holds only the package."""
    env = {**os.environ, "PYTHONPATH": str(Path(ppd.__file__).parents[1])}
    command = [sys.executable, "-P", "-m", "pp_decomp.apps.cli", *args]
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=900)


def tiny() -> ppd.Problem:
    """The problem of :data:`TINY`, made here in Python."""
    space = {}
    exec(TINY, space)
    return space["make"]()


@pytest.fixture(scope="module")
def python_run(tmp_path_factory):
    """A run made in Python (MAP, 6 evaluations) and its still-open optimiser."""
    path = tmp_path_factory.mktemp("python-run") / "run.nc"
    with ppd.Optimizer(tiny(), "d-gpucb-mc", n_init=3, seed=0, checkpoint=path) as opt:
        opt.run(6)
        yield path, opt


def _digest(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_report_draws_a_runs_file_without_touching_it(tmp_path, capsys):
    run = tmp_path / "run.nc"
    with ppd.Optimizer(get_problem("synthetic", seed=1), seed=0, checkpoint=run) as opt:
        opt.run(8)
    before = _digest(run)
    assert main(["report", str(run)]) == 0
    out = tmp_path / "run-report"
    assert {p.name for p in out.glob("*.png")} == PICTURES
    report = (out / "report.md").read_text()
    assert report.startswith("# synthetic: d-gpucb (map), 8 evaluations")
    assert all(f"![{p}]({p})" in report for p in PICTURES)
    assert _digest(run) == before  # read only: no pending input, no new lock or write
    assert main(["report", str(tmp_path / "missing.nc")]) == 2
    assert "is not a file" in capsys.readouterr().err


def test_pictures_of_a_box_in_two_dimensions_and_of_a_composed_strategy(tmp_path):
    problem = ppd.Problem(
        ppd.Box([0, 0], [1, 1]),
        lambda X: np.c_[np.sin(3 * X[:, 0]), X[:, 1] ** 2],
        2,
        g=lambda F: F[..., 0] * (1 + F[..., 1]),
        input_names=["speed", "angle"],
    )
    opt = ppd.Optimizer(problem, n_init=4, seed=0)
    opt.run(7)
    opt.ask()
    lines = run_pictures(opt.report_view(), tmp_path / "d")
    assert (
        set(lines) == PICTURES
        and "speed (the other inputs at the best observed)" in lines["objective.png"]
    )
    gp_ucb = ppd.Optimizer(problem, "gp-ucb", n_init=4, seed=0)
    gp_ucb.run(6)
    assert set(run_pictures(gp_ucb.report_view(), tmp_path / "c")) == PICTURES - {"component.png"}


def test_the_demo_shows_full_bayes_in_pictures_and_a_report(tmp_path, monkeypatch, capsys):
    import arviz_plots

    from pp_decomp.apps.cli import tools

    shown, plot_dist = [], arviz_plots.plot_dist

    def spy(tree, **kw):  # which variables the hyperparameter picture draws
        shown.append(kw.get("var_names"))
        return plot_dist(tree, **kw)

    monkeypatch.setattr(arviz_plots, "plot_dist", spy)
    monkeypatch.setitem(tools.DEMO, "iterations", 7)
    monkeypatch.setitem(tools.DEMO, "seeds", (0, 1))
    assert main(["demo", "--out", str(tmp_path), "--quiet"]) == 0
    assert shown == [["ls", "eta", "sigma"]]  # each once: not the sampler's ls_log__ too
    assert {p.name for p in tmp_path.glob("*.png")} == PICTURES | {"regret.png"}
    report = (tmp_path / "report.md").read_text()
    assert "d-gpucb vs gp-ucb (nuts) on synthetic" in report and "mean ± SE over 2 seeds" in report
    printed = capsys.readouterr().out
    assert printed.count("final cumulative regret") == 3  # each strategy, and their difference
    assert "d-gpucb - gp-ucb, final cumulative regret" in printed and "SE over 2 paired" in printed
    assert report.count("fits of ") == 2 and "(SE over 2 paired seeds)" in report


def test_an_optimizer_reports_its_own_run_from_python(python_run, tmp_path):
    path, opt = python_run
    before, pending = _digest(path), len(opt.pending)
    written = opt.report(tmp_path / "mine")
    assert written == tmp_path / "mine" / "report.md"
    assert {p.name for p in written.parent.glob("*.png")} == PICTURES
    text = written.read_text()
    assert text.startswith("# tiny: d-gpucb-mc (map), 6 evaluations")
    assert f"Run file: {path}" in text
    assert _digest(path) == before and len(opt.pending) == pending  # nothing asked or written


def test_ppd_report_opens_a_python_made_run_given_its_problem(python_run, tmp_path):
    path, _ = python_run
    before = _digest(path)
    written = ppd.report(path, tiny(), out=tmp_path / "given")
    assert {p.name for p in written.parent.glob("*.png")} == PICTURES
    assert written.read_text().startswith("# tiny: d-gpucb-mc (map), 6 evaluations")
    assert _digest(path) == before
    with pytest.raises(TypeError, match=r"problem must be a pp_decomp.Problem.*got int 3"):
        ppd.report(path, 3)
    with pytest.raises(ValueError, match=r"path '.*missing.nc' is not a file"):
        ppd.report(tmp_path / "missing.nc")
    assert callable(ppd.report)  # a function, not a submodule the CLI's imports shadow


def test_a_python_made_run_without_its_problem_is_reported_from_its_file(python_run, tmp_path):
    path, _ = python_run
    before, out = _digest(path), tmp_path / "alone"
    assert main(["report", str(path), "--out", str(out)]) == 0
    assert {p.name for p in out.glob("*.png")} == {"run.png", "choices.png", "diagnostics.png"}
    text = (out / "report.md").read_text()
    assert text.startswith("# tiny: d-gpucb-mc (map), 6 evaluations")
    assert "- best objective observed: " in text and "- simple regret " in text
    assert (
        "- skipped component.png, objective.png, hyperparameters.png: no problem given: "
        "pass --problem mod:factory for the posterior pictures"
    ) in text
    assert _digest(path) == before
    with pytest.raises(ValueError, match=r"problem 'tiny', made in Python.*pass problem="):
        ppd.report(path, components={"f0": "matern52"})  # models need the problem


def test_the_cli_finds_the_problem_module_in_the_current_folder(python_run, tmp_path):
    path, _ = python_run
    shutil.copy(path, tmp_path / "run.nc")
    (tmp_path / "tinyproblem.py").write_text(TINY)
    done = _cli(["report", "run.nc", "--problem", "tinyproblem:make"], tmp_path)
    assert done.returncode == 0, done.stderr
    out = tmp_path / "run-report"
    assert {p.name for p in out.glob("*.png")} == PICTURES
    assert (out / "report.md").read_text().startswith("# tiny: d-gpucb-mc (map), 6 evaluations")


def test_the_problem_may_be_a_problem_object_and_the_components_a_function(tmp_path, monkeypatch):
    (tmp_path / "asobjects.py").write_text(
        TINY
        + """
PROBLEM = make()
COUNT = 3


def components():
    return {"f0": ppd.ComponentGP("matern52")}
"""
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    own = __import__("asobjects")
    got = get_problem("asobjects:PROBLEM", seed=4)
    assert got.components is own.PROBLEM.components and got.metadata["seed"] == 4
    assert "seed" not in own.PROBLEM.metadata  # the user's object is left as it was
    assert get_problem("asobjects:make").name == "tiny"
    with pytest.raises(TypeError, match="'asobjects:COUNT' must name a pp_decomp.Problem or a"):
        get_problem("asobjects:COUNT")
    assert list(load_components("asobjects:components")) == ["f0"]
    with pytest.raises(TypeError, match="--components 'asobjects:COUNT' must name a dict"):
        load_components("asobjects:COUNT")


@pytest.mark.slow
def test_the_cli_reports_a_run_with_a_from_pymc_component_given_components(tmp_path, monkeypatch):
    (tmp_path / "ownpymc.py").write_text(OWN_PYMC)
    monkeypatch.syspath_prepend(str(tmp_path))
    own = __import__("ownpymc")
    with ppd.Optimizer(
        own.make(), n_init=3, seed=0, components=own.COMPONENTS, checkpoint=tmp_path / "run.nc"
    ) as opt:
        opt.run(5)
    refused = _cli(["report", "run.nc", "--problem", "ownpymc:make"], tmp_path)
    assert refused.returncode == 2 and "pass the same components=" in refused.stderr
    args = ["report", "run.nc", "--problem", "ownpymc:make", "--components", "ownpymc:COMPONENTS"]
    done = _cli(args, tmp_path)
    assert done.returncode == 0, done.stderr
    out = tmp_path / "run-report"
    assert {p.name for p in out.glob("*.png")} == PICTURES
    assert (out / "report.md").read_text().startswith("# tiny: d-gpucb-mc-min (map), 5 evaluations")


# ------------------------------------------------------------- found in review
def _plant(**kw) -> ppd.Problem:
    return ppd.Problem(
        domain=ppd.Box([0, 0], [1, 1]),
        components=lambda X: np.c_[np.sin(5 * X[:, 0]), X[:, 1] ** 2],
        n_components=2,
        g=lambda F: F[..., 0] + F[..., 1],
        **kw,
    )


def test_a_resumed_run_reports_at_once(tmp_path):
    """``opt.report`` right after ``resume`` (no choice made in this session yet)
    picked its GP before the models were fitted and drew the GP of g."""
    problem, path = _plant(), tmp_path / "run.nc"
    with ppd.Optimizer(problem, "d-gpucb-mc", checkpoint=path, n_init=3, seed=0) as opt:
        opt.run(5)
    with ppd.Optimizer.resume(path, problem) as opt:
        assert not opt.models
        report = opt.report(tmp_path / "r")
    assert {p.name for p in (tmp_path / "r").glob("*.png")} == PICTURES
    assert "component f0" in report.read_text()


def test_an_additive_run_with_a_pending_input_is_reported(tmp_path):
    """A pending input stays as it is (asking for one more would need a strategy that
    batches, which add-gp-ucb is not); predict does not cover the additive GP, so the
    report draws the file's pictures and says why the others are missing."""
    problem, path = _plant(), tmp_path / "run.nc"
    with ppd.Optimizer(problem, "add-gp-ucb", checkpoint=path, n_init=3, seed=0) as opt:
        opt.run(5)
        opt.ask()  # pending in the checkpoint, as after a kill mid-evaluation
    report = ppd.report(path, problem, out=tmp_path / "r")
    assert "predict does not cover add-gp-ucb" in report.read_text()
    assert {p.name for p in (tmp_path / "r").glob("*.png")} == {
        "run.png", "choices.png", "diagnostics.png",
    }  # fmt: skip


def test_a_file_with_no_evaluation_is_refused_by_name(tmp_path):
    problem, path = _plant(), tmp_path / "run.nc"
    with ppd.Optimizer(problem, checkpoint=path, seed=0) as opt:
        opt.ask()  # the checkpoint holds the pending input, no evaluation
    with pytest.raises(ValueError, match=r"run.nc' holds no evaluation yet"):
        ppd.report(path, problem)


def test_a_python_made_problem_given_back_without_names_is_reported_with_the_stored_ones(
    tmp_path,
):
    path = tmp_path / "run.nc"
    named = _plant(input_names=["dose", "timing"])
    with ppd.Optimizer(named, checkpoint=path, n_init=3, seed=0) as opt:
        opt.run(4)
    from pp_decomp.apps.run_report import open_run

    assert list(open_run(path, _plant()).problem.input_names) == ["dose", "timing"]


def test_the_diagnostics_of_a_file_written_before_the_model_dimension_are_drawn(tmp_path):
    import xarray as xr

    from pp_decomp.apps.report_pictures import plot_diagnostics

    dims = ("iteration", "component")  # files before this change, decomposed strategies
    old = xr.Dataset(
        {
            "ess_bulk_min": (dims, [[150.0, 420.0], [200.0, 500.0]]),
            "fit_pareto_k": (dims, [[0.2, np.nan], [0.3, 0.1]]),
            "fit_draws": (dims, [["prior importance", "chains"], ["prior importance", "chains"]]),
        },
        coords={"iteration": [1, 2], "component": ["a", "b"]},
    )
    plot_diagnostics(old, tmp_path / "d.png", "an old run")
    assert (tmp_path / "d.png").stat().st_size > 0
