"""What users install: the wheel, built and installed into a fresh virtual environment.

The environment sees its dependencies (already installed for the tests) but
no source tree: the check is that the wheel itself holds every module and data
file, imports, and runs a short loop and the command line.
"""

import subprocess
import sys
import sysconfig
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def source_modules() -> set[str]:
    """Every module of the source tree, by the name it has once installed."""
    mods = set()
    for root, prefix in ((ROOT / "pp_decomp", "pp_decomp"), (ROOT / "models", "pp_decomp.models")):
        for path in root.rglob("*.py"):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            if parts and parts[-1] == "__main__":
                continue
            mods.add(".".join([prefix, *parts]))
    return mods


@pytest.fixture(scope="module")
def fresh_env(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("install")
    wheels = tmp / "wheels"
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-v"]
        + ["-w", str(wheels), str(ROOT)],
        check=True,
        capture_output=True,
        text=True,
    )
    (wheel,) = wheels.glob("pp_decomp-*.whl")
    # every install printed setuptools' 40-line warning on models/data
    assert "absent from the `packages` configuration" not in built.stdout + built.stderr
    env = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(env)], check=True)
    py = env / "bin" / "python"
    subprocess.run(
        [str(py), "-m", "pip", "install", "-q", "--no-deps", "--no-index", str(wheel)],
        check=True,
        capture_output=True,
    )
    # the dependencies, and nothing of the source tree (.pth files there are not run)
    site = subprocess.run(
        [str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    Path(site, "test-dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return env, tmp


def run_in(env, tmp, code: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(env / "bin" / "python"), "-c", textwrap.dedent(code)],
        cwd=tmp,
        capture_output=True,
        text=True,
        env={"OPENBLAS_NUM_THREADS": "1", "PATH": "/usr/bin:/bin"},
    )


@pytest.mark.slow
def test_the_wheel_holds_every_module_and_runs_a_loop(fresh_env):
    env, tmp = fresh_env
    code = f"""
        import importlib, pathlib, warnings
        import pp_decomp
        assert "site-packages" in pp_decomp.__file__ and {str(ROOT)!r} not in pp_decomp.__file__
        for name in sorted({sorted(source_modules())!r}):
            importlib.import_module(name)
        from pp_decomp import Optimizer
        from pp_decomp.models import get_problem
        for name in ("flu", "perceived-temperature", "tuberculosis"):
            get_problem(name)  # their data files came with the wheel
        problem = get_problem("synthetic", n_components=2, n_points=50)
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no third-party warning leaks
            ds = Optimizer(problem, n_init=2, seed=0).run(3)
        assert ds.sizes["iteration"] == 3 and ds["phase"].values[-1] == "acquisition"
        print("ok")
    """
    out = run_in(env, tmp, code)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().endswith("ok")


@pytest.mark.slow
def test_the_installed_command_line(fresh_env):
    env, tmp = fresh_env
    cli = env / "bin" / "pp-decomp"
    help_ = subprocess.run([str(cli), "--help"], capture_output=True, text=True, cwd=tmp)
    assert help_.returncode == 0 and "run" in help_.stdout
    run = subprocess.run(
        [str(cli), "run", "--problem", "synthetic", "--iterations", "3", "--init", "2"]
        + ["--out", "r.nc", "--quiet"],
        capture_output=True,
        text=True,
        cwd=tmp,
        env={"OPENBLAS_NUM_THREADS": "1", "PATH": "/usr/bin:/bin"},
    )
    assert run.returncode == 0, run.stderr
    assert "3 evaluations" in run.stdout
    # nothing but pp_decomp's own messages on stderr: no third-party warnings
    assert all(line.startswith("pp_decomp:") for line in run.stderr.splitlines()), run.stderr
