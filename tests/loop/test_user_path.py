"""The user's path end to end, written from the README and the docs alone.

A system of the user's own with three inputs, a kernel expression on the log
scale for a positive component and the user's own PyMC model for another,
under full Bayes: 15 evaluations, the process killed (SIGKILL) while it runs
on, resumed to 30, then everything a notebook user reads: ``predict``,
``posterior`` for ArviZ, ``opt.report`` and ``pp-decomp report`` on the file.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
import warnings
from pathlib import Path

import arviz_stats
import numpy as np
import pytest
import xarray as xr

import pp_decomp as ppd

SYSTEM = '''
import numpy as np
import pymc as pm
import pp_decomp as ppd
from pp_decomp import Prior
from pp_decomp import kernels as K


def system(X):
    """A plant of my own: a rough response, a positive rate, a smooth cost."""
    response = np.sin(5 * X[:, 0]) * np.cos(3 * X[:, 1]) + X[:, 2]
    rate = np.exp(3 * X[:, 1] - 2 * X[:, 2] + X[:, 0])
    cost = (X[:, 0] - 0.3) ** 2 + 0.5 * X[:, 2]
    return np.column_stack([response, rate, cost])


def problem():
    return ppd.Problem(
        domain=ppd.Box([0, 0, 0], [1, 1, 1]),
        components=system,
        n_components=3,
        g=lambda F: F[..., 0] + 0.1 * np.log(F[..., 1]) - F[..., 2],
        component_names=["response", "rate", "cost"],
        input_names=["dose", "timing", "volume"],
        name="my-plant",
    )


def build(X, y, input_dim):
    with pm.Model() as model:
        ls = pm.InverseGamma("ls", alpha=3, beta=0.6, shape=input_dim)
        eta = pm.Gamma("eta", alpha=2, beta=2)
        gp = pm.gp.Marginal(cov_func=eta**2 * pm.gp.cov.Matern52(input_dim, ls=ls))
        gp.marginal_likelihood("y", X=X, y=y, sigma=pm.HalfNormal("sigma", 0.3))
    return model, gp


components = {
    "response": ppd.ComponentGP.from_pymc(build),
    "rate": ppd.ComponentGP(
        K.Matern52(ls=Prior("InverseGamma", alpha=3, beta=0.6)), transform="log"
    ),
}
'''

RUN = """
import sys, warnings
sys.path.insert(0, {folder!r})
import pp_decomp as ppd
import my_plant

warnings.simplefilter("ignore")
with ppd.Optimizer.open({path!r}, my_plant.problem(), strategy="d-gpucb-mc",
                        inference="nuts", components=my_plant.components, seed=0) as opt:
    opt.run(30)
"""


def evaluations(path: Path) -> int:
    """How many evaluations the checkpoint holds (0 before its first write)."""
    if not path.exists():
        return 0
    try:
        with xr.open_dataset(path, engine="h5netcdf") as ds:
            return int(ds.sizes.get("iteration", 0))
    except (OSError, ValueError, KeyError, RuntimeError):
        return 0  # caught between the temporary file and the move


def killed_after(script: str, path: Path, count: int, seconds: float, cwd=None) -> int:
    """Run ``script`` in a fresh Python, SIGKILL it once its checkpoint at ``path`` holds
    ``count`` evaluations; how many it holds then (asserting the kill came in time)."""
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1"}
    child = subprocess.Popen([sys.executable, "-c", script], env=env, cwd=cwd)
    deadline = time.monotonic() + seconds
    try:
        while evaluations(path) < count:
            assert child.poll() is None, "the run ended before it was killed"
            assert time.monotonic() < deadline, f"no {count} evaluations in {seconds} s"
            time.sleep(0.2)
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
    return evaluations(path)


@pytest.mark.slow
def test_a_users_own_system_and_model_full_bayes_killed_resumed_and_reported(tmp_path):
    (tmp_path / "my_plant.py").write_text(textwrap.dedent(SYSTEM))
    path = tmp_path / "run.nc"
    script = RUN.format(folder=str(tmp_path), path=str(path))
    told = killed_after(script, path, 15, 900, cwd=tmp_path)
    assert 15 <= told < 30

    sys.path.insert(0, str(tmp_path))
    try:
        import my_plant
    finally:
        sys.path.remove(str(tmp_path))
    problem = my_plant.problem()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        opt = ppd.Optimizer.open(
            path, problem, strategy="d-gpucb-mc", inference="nuts",
            components=my_plant.components, seed=0,
        )  # fmt: skip
        assert opt.n == told  # nothing told before the kill is lost
        ds = opt.run(30)
    assert opt.n == 30 and ds.sizes["iteration"] == 30
    assert list(ds["input_name"].values) == ["dose", "timing", "volume"]
    assert np.all(np.isfinite(ds["objective"].values))
    kinds = set(ds["fit_draws"].values[ds["refit"].values])
    assert kinds and kinds <= {
        "chains", "reweighted chains", "prior importance", "posterior importance",
        "laplace importance",
    }  # fmt: skip
    assert ds.fit_draws.sel(model="response").dims == ("iteration",)

    X = problem.domain.sample(4, seed=1)
    post = opt.predict(X)
    assert post.sizes["point"] == 4 and post["objective_quantile"].dims == ("quantile", "point")
    assert np.all(post["component_mean"].sel(component="rate").values > 0)  # the log scale
    tree = opt.posterior("response")
    table = arviz_stats.summary(tree)
    assert {"ls[0]", "ls[2]", "eta", "sigma"} <= set(table.index)

    report = opt.report(tmp_path / "notebook-report")
    assert report.name == "report.md" and "fits of" in report.read_text()
    opt.close()

    cli = [sys.executable, "-m", "pp_decomp.apps.cli", "report", str(path)]
    cli += ["--problem", "my_plant:problem", "--components", "my_plant:components"]
    cli += ["--out", str(tmp_path / "cli-report")]
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1"}
    out = subprocess.run(cli, cwd=tmp_path, env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert (tmp_path / "cli-report" / "report.md").exists()
    assert {p.name for p in (tmp_path / "cli-report").glob("*.png")} >= {
        "component.png", "objective.png", "hyperparameters.png", "diagnostics.png",
    }  # fmt: skip
