"""A run whose components each have their own model: recorded, killed and resumed to
the same choices, and refused when resumed with other models."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import xarray as xr

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = textwrap.dedent(
    """
    import os, signal, sys, warnings

    import numpy as np

    import pp_decomp as ppd
    from pp_decomp import Prior
    from pp_decomp import kernels as K
    from pp_decomp.loop.optimizer import Optimizer

    KILL = int(os.environ.get("PP_KILL_AT", "0"))


    def tell(self, x, y, _tell=Optimizer.tell):
        _tell(self, x, y)
        if self.n == KILL:  # tell KILL returned: its checkpoint is written
            os.kill(os.getpid(), signal.SIGKILL)


    Optimizer.tell = tell


    def components(X):
        x0, x1 = X[:, 0], X[:, 1]
        return np.column_stack(
            [np.abs(np.sin(7 * x0)) + 0.3 * x1, np.sin(2 * np.pi * x0) + 0.5 * x1**2,
             np.exp(3 * x1 - 2 * x0)]
        )


    problem = ppd.Problem(
        domain=ppd.Box([0, 0], [3, 1]), components=components, n_components=3,
        g=lambda F: F[..., 0] + F[..., 1] - 0.1 * F[..., 2], name="three",
        component_names=["rough", "daily", "rate"], noise_sd=0.01,
    )
    rough = ppd.ComponentGP(K.Warped(K.Matern12(ls=Prior("InverseGamma", alpha=3, beta=0.6))))
    daily = ppd.ComponentGP(
        K.ExpQuad() + K.Periodic(period=1.0, active_dims=[0]), noise=Prior("HalfNormal", sigma=0.1)
    )
    rate = ppd.ComponentGP(K.Matern52(), transform="log")
    path, n = sys.argv[1], int(sys.argv[2])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # small NUTS settings: diagnostics may complain
        if os.path.exists(path):
            opt = Optimizer.resume(path, problem)
        else:
            opt = Optimizer(
                problem, "d-gpucb-mc", inference="nuts", components=[rough, daily, rate],
                seed=0, checkpoint=path, mc_samples=128,
            )
        opt.run(n)
    """
)


def _child(path: Path, n: int, kill_at: int = 0) -> None:
    env = dict(os.environ, PP_KILL_AT=str(kill_at), PYTHONPATH=str(ROOT))
    proc = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(path), str(n)],
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    want = -signal.SIGKILL if kill_at else 0
    assert proc.returncode == want, proc.stderr[-3000:]


@pytest.mark.slow
def test_three_component_models_run_full_bayes_killed_and_resumed_to_the_same_choices(tmp_path):
    ref_path, out = tmp_path / "ref.nc", tmp_path / "killed.nc"
    _child(ref_path, 14)
    ref = xr.load_dataset(ref_path)
    models = json.loads(ref.attrs["settings"])["components"]
    assert [m["kernel"]["op"] for m in models.values()] == ["Warped(Matern12)", "+", "Matern52"]
    assert models["rough"]["kernel"]["params"]["ls"] == {
        "dist": "InverseGamma",
        "kwargs": {"alpha": 3.0, "beta": 0.6},
    }
    assert models["daily"]["noise"] == {"dist": "HalfNormal", "kwargs": {"sigma": 0.1}}
    assert models["rate"]["transform"] == "log"
    assert json.loads(ref.attrs["settings"])["outcome_transform"] == ["none", "none", "log"]
    assert json.loads(ref.attrs["settings"])["inference"] == "nuts"
    _child(out, 14, kill_at=9)
    assert xr.load_dataset(out).sizes["iteration"] == 9
    _child(out, 14)
    done = xr.load_dataset(out)
    np.testing.assert_array_equal(done["x"].values, ref["x"].values)
    np.testing.assert_array_equal(done["y"].values, ref["y"].values)


def test_resume_with_another_component_model_is_refused_by_name(tmp_path):
    import pp_decomp as ppd
    from pp_decomp import kernels as K

    def components(X):
        return np.column_stack([X[:, 0], 1.0 + X[:, 1]])

    problem = ppd.Problem(
        domain=ppd.Box([0, 0], [1, 1]),
        components=components,
        n_components=2,
        g=lambda F: F[..., 0] + F[..., 1],
        name="two",
        component_names=["a", "b"],
    )
    path = tmp_path / "run.nc"
    opt = ppd.Optimizer(problem, components={"b": K.Matern12()}, checkpoint=path, n_init=2)
    opt.run(3)
    same = ppd.Optimizer.resume(path, problem, components={"b": K.Matern12()})
    assert same.n == 3
    with pytest.raises(
        ValueError, match=r"component 'b''s model: file Matern12\(\) .*asked Matern32\(\)"
    ):
        ppd.Optimizer.resume(path, problem, components={"b": K.Matern32()})
    with pytest.raises(ValueError, match=r"component 'a''s model: file the default model"):
        ppd.Optimizer.resume(path, problem, components={"a": K.Matern12(), "b": K.Matern12()})
