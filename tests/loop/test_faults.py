"""Fault injection (issue 19): nothing a user paid for is lost.

Kills at chosen points of a run, a full disk, damaged files, two writers, a simulator
that fails at 10% of its inputs, runs that must not be mixed on resume.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import xarray as xr

from pp_decomp import Box, Optimizer, Problem
from pp_decomp.loop import checkpoint as ckpt
from pp_decomp.loop.checkpoint import CheckpointError
from pp_decomp.models import get_problem

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def problem():
    return get_problem("synthetic", seed=3, n_components=2, n_points=120)


def _env():
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    return env


def _run_some(problem, path, n=6, **kw):
    opt = Optimizer(problem, "d-gpucb", n_init=4, inference="map", seed=1, checkpoint=path, **kw)
    for _ in range(n):
        x = opt.ask()
        opt.tell(x, problem.evaluate(x[None], seed=0)[0])
    return opt


def _stray(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if ".tmp" in p.name)


# ---------------------------------------------------------------- damaged files
def _damage(kind: str, path: Path, good: bytes) -> None:
    if kind == "truncated":
        path.write_bytes(good[: len(good) // 2])
    elif kind == "garbage":
        path.write_bytes(np.random.default_rng(0).bytes(4096))
    elif kind == "empty":
        path.write_bytes(b"")
    elif kind == "not-a-checkpoint":
        path.unlink()
        xr.Dataset({"a": ("i", [1.0, 2.0])}).to_netcdf(path, engine="h5netcdf")
    elif kind == "tampered":
        import h5py

        with h5py.File(path, "r+") as f:  # an edit of the observations behind our back
            f["y"][0, 0] += 1.0
    elif kind == "directory":
        path.unlink()
        path.mkdir()


@pytest.mark.parametrize(
    "kind,match",
    [
        ("truncated", "not a readable pp_decomp checkpoint"),
        ("garbage", "not a readable pp_decomp checkpoint"),
        ("empty", "not a readable pp_decomp checkpoint"),
        ("not-a-checkpoint", "not a readable pp_decomp checkpoint"),
        ("tampered", "fails its checksum"),
        ("directory", "is not a file"),
    ],
)
def test_a_damaged_checkpoint_is_refused_by_name(problem, tmp_path, kind, match):
    path = tmp_path / "run.nc"
    _run_some(problem, path).close()
    _damage(kind, path, path.read_bytes())
    with pytest.raises(CheckpointError, match=match) as err:
        Optimizer.resume(path, problem)
    assert str(path) in str(err.value)


def _overwrite_64_bytes(path: Path, at: int) -> None:
    """64 bytes of the file at ``path`` overwritten in place, from byte ``at``."""
    data = bytearray(path.read_bytes())
    data[at : at + 64] = b"\xff" * 64
    path.write_bytes(bytes(data))


def test_64_bytes_overwritten_anywhere_mid_file_give_the_clear_error_or_a_checked_read(
    problem, tmp_path
):
    """HDF5 raises RuntimeError, AttributeError, ... on some damaged layouts: each is
    refused naming the file (or, where the bytes hit nothing checked, read as stored)."""
    path = tmp_path / "run.nc"
    _run_some(problem, path).close()
    good = path.read_bytes()
    refused = 0
    for at in range(len(good) // 8, len(good) - 64, len(good) // 40):
        path.write_bytes(good)
        _overwrite_64_bytes(path, at)
        try:
            results, _ = ckpt.read(path)
            ckpt.read_draws(path)
        except CheckpointError as err:
            assert str(path) in str(err), at
            refused += 1
            continue
        assert results.sizes["iteration"] == 6, at  # the checked observations, whole
    assert refused > 0


def test_a_damaged_newest_checkpoint_names_the_previous_generation_which_resumes(problem, tmp_path):
    path = tmp_path / "run.nc"
    opt = _run_some(problem, path)  # its last two writes: ask 6 (pending), tell 6
    told = opt.X.copy()
    opt.close()
    prev = ckpt.previous(path)
    assert ckpt.read(prev)[0].sizes["iteration"] == 5  # written before the last write
    _overwrite_64_bytes(path, len(path.read_bytes()) // 2)
    with pytest.raises(CheckpointError, match="damaged") as err:  # unreadable, or its checksum
        Optimizer.resume(path, problem)
    msg = str(err.value)
    assert str(path) in msg and f"previous checkpoint {str(prev)!r} is intact" in msg
    assert "holds 5 evaluation(s)" in msg and "resume" in msg
    os.replace(path, tmp_path / "run.nc.damaged")  # as the message says
    os.replace(prev, path)
    back = Optimizer.resume(path, problem)
    assert back.n == 5 and len(back.pending) == 1  # nothing told before its write is lost
    np.testing.assert_array_equal(back.X, told[:5])
    np.testing.assert_array_equal(back.ask(), told[5])  # the sixth input, asked again


def test_a_previous_generation_left_alone_is_not_replaced_by_a_new_run(problem, tmp_path):
    path = tmp_path / "run.nc"
    _run_some(problem, path).close()
    os.replace(path, tmp_path / "elsewhere.nc")  # the newest moved away, its .prev left
    with pytest.raises(CheckpointError, match="its previous generation .*run.nc.prev"):
        Optimizer(problem, "d-gpucb", n_init=4, checkpoint=path)
    opt = _run_some(problem, path, n=2, overwrite=True)  # the old .prev went at the first write
    assert ckpt.read(ckpt.previous(path))[0].sizes["iteration"] == 1
    opt.close()


# ---------------------------------------------------------------- two writers, overwrite
HOLDER = textwrap.dedent(
    """
    import sys
    from pp_decomp import Optimizer
    from pp_decomp.models import get_problem
    problem = get_problem("synthetic", seed=3, n_components=2, n_points=120)
    opt = Optimizer.resume(sys.argv[1], problem)
    print("holding", flush=True)
    sys.stdin.read()  # holds the file until the test kills it (no time limit to outlast)
    """
)


def test_a_second_writer_in_another_process_is_refused_and_the_first_keeps_its_file(
    problem, tmp_path
):
    path = tmp_path / "run.nc"
    _run_some(problem, path).close()
    before = ckpt.read(path)[0]["x"].values
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(path)],
        env=_env(),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "holding"
        with pytest.raises(CheckpointError, match=r"being written by process \d+"):
            Optimizer.resume(path, problem)
        with pytest.raises(CheckpointError, match="being written by process"):
            Optimizer(problem, "d-gpucb", checkpoint=path, overwrite=True)
    finally:
        holder.kill()
        holder.wait()
    np.testing.assert_array_equal(ckpt.read(path)[0]["x"].values, before)
    Optimizer.resume(path, problem).close()  # the dead holder's lock went with it


def test_an_existing_run_is_never_replaced_silently(problem, tmp_path):
    path = tmp_path / "run.nc"
    _run_some(problem, path).close()
    before = path.read_bytes()
    with pytest.raises(CheckpointError, match="already holds a run"):
        Optimizer(problem, "d-gpucb", checkpoint=path)
    with pytest.raises(ValueError, match="strategy"):  # a typo: refused before the file is touched
        Optimizer(problem, "d-gpucbb", checkpoint=path, overwrite=True)
    assert path.read_bytes() == before
    with pytest.raises(ValueError, match="does not exist"):
        Optimizer.resume(tmp_path / "missing.nc", problem)


# ---------------------------------------------------------------- resume never mixes runs
@pytest.mark.parametrize(
    "expected,match",
    [
        (dict(strategy="gp-ucb"), "strategy"),
        (dict(seed=2), "seed"),
        (dict(inference="nuts"), "inference"),
        (dict(n_init=5), "n_init"),
    ],
)
def test_resume_refuses_other_settings_naming_both_values(problem, tmp_path, expected, match):
    path = tmp_path / "run.nc"
    _run_some(problem, path).close()
    with pytest.raises(ValueError, match=match):
        Optimizer.resume(path, problem, **expected)


def test_resume_refuses_another_problem_instance_or_shape(problem, tmp_path):
    path = tmp_path / "run.nc"
    _run_some(problem, path).close()
    with pytest.raises(ValueError, match="problem"):
        Optimizer.resume(path, get_problem("synthetic", seed=4, n_components=2, n_points=120))
    with pytest.raises(ValueError, match="problem"):
        Optimizer.resume(path, get_problem("synthetic", seed=3, n_components=3, n_points=120))


def _linear(offset: float) -> Problem:
    """A 2-D linear decomposition with a known term ``offset · x_0``."""
    return Problem(
        domain=Box([0.0, 0.0], [1.0, 1.0]),
        components=lambda X: np.column_stack([np.sin(3 * X[:, 0]), np.cos(2 * X[:, 1])]),
        n_components=2,
        weights=lambda X: np.column_stack([np.ones(len(X)), 1.0 + X[:, 1]]),
        offset=lambda X: offset * X[:, 0],
        noise_sd=0.01,
        name="known-term",
    )


def test_resume_refuses_a_problem_whose_known_term_differs(tmp_path):
    path = tmp_path / "run.nc"
    opt = Optimizer(_linear(1.0), "d-gpucb", n_init=3, seed=0, checkpoint=path)
    for _ in range(3):
        x = opt.ask()
        opt.tell(x, opt.problem.evaluate(x[None], seed=0)[0])
    opt.close()
    with pytest.raises(ValueError, match="decomposition"):
        Optimizer.resume(path, _linear(2.0))
    assert Optimizer.resume(path, _linear(1.0)).n == 3


# ---------------------------------------------------------------- full disk
DISK_FULL = textwrap.dedent(
    """
    import os, resource, signal, sys
    import numpy as np
    from pp_decomp import Optimizer
    from pp_decomp.loop.checkpoint import CheckpointError
    from pp_decomp.models import get_problem

    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG
    problem = get_problem("synthetic", seed=3, n_components=2, n_points=120)
    path = sys.argv[1]
    opt = Optimizer(problem, "d-gpucb", n_init=4, inference="map", seed=1, checkpoint=path)
    for _ in range(6):
        x = opt.ask()
        opt.tell(x, problem.evaluate(x[None], seed=0)[0])
    size = os.path.getsize(path)
    resource.setrlimit(resource.RLIMIT_FSIZE, (size // 2, resource.RLIM_INFINITY))
    try:
        x = opt.ask()
    except CheckpointError as err:
        print("ASK", err, flush=True)
        x = opt.pending.X[0]
    try:
        opt.tell(x, problem.evaluate(x[None], seed=0)[0])
    except CheckpointError as err:
        print("TELL", err, flush=True)
    print("IN MEMORY", opt.n, flush=True)
    resource.setrlimit(resource.RLIMIT_FSIZE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
    opt.save(path)  # space again: nothing was lost
    print("SAVED", flush=True)
    """
)


def test_a_full_disk_keeps_the_previous_file_and_every_evaluation(tmp_path):
    path = tmp_path / "run.nc"
    proc = subprocess.run(
        [sys.executable, "-c", DISK_FULL, str(path)],
        env=_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "the disk is full" in proc.stdout and "previous checkpoint is intact" in proc.stdout
    assert "IN MEMORY 7" in proc.stdout and "SAVED" in proc.stdout
    results, _ = ckpt.read(path)
    assert results.sizes["iteration"] == 7
    assert _stray(tmp_path) == []


# ---------------------------------------------------------------- a simulator that fails
def _flaky_problem() -> Problem:
    def components(X):
        # deterministic failures at about 10% of the inputs
        bad = (np.floor(X[:, 0] * 997) + np.floor(X[:, 1] * 991)) % 10 == 0
        if np.any(bad) and len(X) == 1:
            raise RuntimeError(f"solver diverged at {X[0].tolist()}")
        return np.c_[np.sin(3 * X[:, 0]), np.cos(2 * X[:, 1])]

    return Problem(Box([[0, 1], [0, 1]]), components, n_components=2, weights=[1, 1])


def test_a_simulator_failing_at_ten_percent_of_inputs_completes_its_run():
    problem = _flaky_problem()
    opt = Optimizer(problem, "d-gpucb", n_init=5, inference="map", seed=0)
    ds = opt.run(50, on_error="record")
    assert ds.sizes["iteration"] == 50
    n_fail = ds.sizes.get("failure", 0)
    assert 1 <= n_fail and len(opt.failures.reasons) == n_fail
    assert all("solver diverged" in r for r in opt.failures.reasons)
    failed = opt.failures.X
    for k, (x, told_before) in enumerate(zip(failed, opt.failures.after, strict=True)):
        # nothing within 0.1% of a failed input is asked after it (max_retries=0);
        # an input near it asked before it failed is the simulator's business
        later = np.vstack([opt.X[told_before:], failed[k + 1 :]])
        assert not np.any(np.all(np.abs(later - x) <= 1e-3, axis=1))


def test_a_system_failing_everywhere_stops_the_run_after_so_many_in_a_row_keeping_all(tmp_path):
    def components(X):
        if len(X) == 1 and X[0, 0] > 0.05:  # (the problem checks its shape on a batch)
            raise RuntimeError("out of licences")
        return np.c_[X[:, 0], X[:, 1]]

    problem = Problem(Box([[0, 1], [0, 1]]), components, n_components=2, weights=[1, 1])
    path = tmp_path / "run.nc"
    opt = Optimizer(problem, "d-gpucb", n_init=3, inference="map", seed=0, checkpoint=path)
    opt.tell(np.array([0.01, 0.5]), components(np.array([[0.01, 0.5]]))[0])
    with pytest.raises(RuntimeError, match=r"the last 6 evaluations all failed .*licences"):
        opt.run(10, on_error="record", max_failures_in_a_row=6)
    assert opt.n == 1 and len(opt.failures) == 6
    back = Optimizer.resume(path, problem)
    assert back.n == 1 and len(back.failures) == 6
    with pytest.raises(ValueError, match="max_failures_in_a_row must be"):
        opt.run(10, max_failures_in_a_row=0)


def _nan_somewhere(nan_at: list) -> Problem:
    """A system whose ``g`` is NaN at the inputs in ``nan_at`` (filled in later, so
    that the problem's own check of ``g`` at sample inputs passes)."""

    def g(F, X):
        out = F[..., 0] + F[..., 1]
        for x in nan_at:
            out = np.where(np.all(np.abs(X - x) < 1e-12, axis=-1), np.nan, out)
        return out

    return Problem(
        Box([[0, 1], [0, 1]]),
        lambda X: np.c_[np.sin(3 * X[:, 0]), np.cos(2 * X[:, 1])],
        n_components=2,
        g=g,
        name="nan-somewhere",
    )


def test_a_g_nan_at_a_told_input_is_refused_naming_it_and_nothing_is_stored(tmp_path):
    nan_at: list = []
    problem = _nan_somewhere(nan_at)
    path = tmp_path / "run.nc"
    opt = Optimizer(problem, "d-gpucb-mc", n_init=3, inference="map", seed=0, checkpoint=path)
    x = opt.ask()
    opt.tell(x, problem.evaluate(x[None], seed=0)[0])
    x = opt.ask()
    nan_at.append(x)
    y = problem.evaluate(x[None], seed=0)[0]
    before = path.read_bytes()
    with pytest.raises(ValueError, match=r"g\(y; x\) is not finite \(nan\)") as err:
        opt.tell(x, y)
    assert f"x={x.tolist()}" in str(err.value) and f"y={y.tolist()}" in str(err.value)
    assert opt.n == 1 and len(opt.pending) == 1  # still asked, not told
    assert path.read_bytes() == before  # the checkpoint untouched
    opt.tell_failure(x, "g is NaN there")  # what the error suggests
    assert opt.n == 1 and np.isfinite(opt.results()["objective"].values).all()


def test_a_run_whose_g_is_nan_at_a_design_input_stops_or_records_it_storing_no_nan(tmp_path):
    nan_at: list = []
    problem = _nan_somewhere(nan_at)
    path = tmp_path / "run.nc"
    opt = Optimizer(problem, "d-gpucb-mc", n_init=3, inference="map", seed=0, checkpoint=path)
    nan_at.append(opt.state.init_design[1])
    with pytest.raises(ValueError, match=r"output at x=\[.*\] is not finite .*y=\[.*g\(y; x\)=nan"):
        opt.run(4)
    assert opt.n == 1
    results, _ = ckpt.read(path)
    assert results.sizes["iteration"] == 1 and np.isfinite(results["objective"].values).all()
    ds = opt.run(4, on_error="record")  # the same run, going on past it
    assert opt.n == 4 and np.isfinite(ds["objective"].values).all()
    assert len(opt.failures) == 1 and "non-finite output" in opt.failures.reasons[0]
    np.testing.assert_array_equal(opt.failures.X[0], nan_at[0])
    opt.close()


# ---------------------------------------------------------------- kills at chosen points
# Each kill is a real SIGKILL of a child process running the loop, sent by the child
# to itself when the run reaches the point $PP_KILL names: no wall-clock timing, so
# every kill lands, and at the same place, however busy the machine is.
KILLER = textwrap.dedent(
    """
    import os, signal, sys, threading, warnings

    import pp_decomp.apps.cli  # pins the BLAS threads before numpy loads, as the command does
    from pp_decomp.loop import checkpoint as ckpt
    from pp_decomp.loop.updaters import fast as update_fast
    from pp_decomp.loop.optimizer import Optimizer

    WHERE, _, K = os.environ.get("PP_KILL", "").partition(":")
    K = int(K or 0)


    def die():
        os.kill(os.getpid(), signal.SIGKILL)


    # evaluated:K  evaluation K done, not told (its input pending in the checkpoint)
    # told:K       tell K returned: its checkpoint written
    def tell(self, x, y, _tell=Optimizer.tell):
        if WHERE == "evaluated" and self.n + 1 == K:
            die()
        _tell(self, x, y)
        if WHERE == "told" and self.n == K:
            die()


    Optimizer.tell = tell

    # inside a checkpoint write (pp_decomp.loop.checkpoint.file.write), through its `os`:
    # mid-write:K           tell K's file: half the temporary file written
    # before-rename:K       tell K's file: temporary file complete and fsynced, not renamed
    # before-rename-ask:K   the file of the ask that chose input K, likewise
    ARMED = False


    def write(path, results, state, draws=None, _write=ckpt.write):
        global ARMED
        n, asked = results.sizes.get("iteration", 0), bool(state["pending"])
        ARMED = (WHERE in ("mid-write", "before-rename") and not asked and n == K) or (
            WHERE == "before-rename-ask" and asked and n == K - 1
        )
        _write(path, results, state, draws)


    class KillingOS:
        def __getattr__(self, name):
            return getattr(os, name)

        def write(self, fd, data):
            if ARMED and WHERE == "mid-write":
                os.write(fd, data[: len(data) // 2])
                die()
            return os.write(fd, data)

        def replace(self, src, dst):
            if ARMED:
                die()
            return os.replace(src, dst)


    ckpt.write, ckpt.file.os = write, KillingOS()

    # the fast path's background refits (inference="nuts"): the K-th refit this process
    # starts in the background (FastUpdater._launch_due; not a collapsed GP's, which the
    # step waits for at once) is held inside its thread; then the process is killed
    # refit-started:K   right after the launch, before a checkpoint records the refit
    # refit-recorded:K  after the checkpoint written next, which records it in flight
    DUE, LAUNCHES, TARGET, INSIDE = False, 0, None, threading.Event()


    def launch_due(self, *args, _due=update_fast.FastUpdater._launch_due):
        global DUE
        DUE = True
        try:
            _due(self, *args)
        finally:
            DUE = False


    def launch(
        self, X, y, seed, consume_at, pool, repair=False, _launch=update_fast.FastComponent.launch
    ):
        global LAUNCHES, TARGET
        LAUNCHES += DUE
        if DUE and WHERE.startswith("refit-") and LAUNCHES == K:
            TARGET = seed  # before the job is submitted: no race with its thread
        _launch(self, X, y, seed, consume_at, pool, repair=repair)
        if WHERE == "refit-started" and TARGET is not None:
            INSIDE.wait()
            die()


    def refit(gp_args, X, y, seed, *rest, _refit=update_fast._refit):
        in_background = threading.current_thread().name.startswith("pp_decomp-refit")
        if in_background and TARGET is not None and seed == TARGET:
            INSIDE.set()
            threading.Event().wait()  # running until the process is killed
        return _refit(gp_args, X, y, seed, *rest)


    def save(self, _save=Optimizer._save):
        _save(self)
        if WHERE == "refit-recorded" and TARGET is not None:
            INSIDE.wait()
            die()


    update_fast.FastComponent.launch, update_fast._refit = launch, refit
    update_fast.FastUpdater._launch_due = launch_due
    Optimizer._save = save

    if sys.argv[1] == "cli":
        sys.exit(pp_decomp.apps.cli.main(sys.argv[2:]))
    from pp_decomp.loop import FastSettings
    from pp_decomp.models import get_problem

    path, n = sys.argv[2], int(sys.argv[3])
    problem = get_problem("synthetic", seed=5, n_components=2, n_points=120)
    fast = FastSettings(draws=100, tune=150, chains=2, max_age=3, lag=2, kept_draws=64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # tiny NUTS settings: diagnostics may complain
        if os.path.exists(path):
            opt = Optimizer.resume(path, problem)
        else:
            opt = Optimizer(
                problem, "d-gpucb", checkpoint=path, inference="nuts", seed=4, n_init=4,
                mc_samples=64, fast_settings=fast,
            )
        opt.run(n)
    """
)


def _child(args: list[str], kill: str = "") -> subprocess.CompletedProcess:
    """Run the loop in a child process that kills itself at ``kill`` (``""``: never)."""
    env = dict(_env(), PP_KILL=kill)
    proc = subprocess.run(
        [sys.executable, "-c", KILLER, *args], env=env, capture_output=True, text=True, timeout=600
    )
    want = -signal.SIGKILL if kill else 0
    assert proc.returncode == want, (
        f"{kill or 'no kill'}: exit {proc.returncode}\n{proc.stderr[-3000:]}"
    )
    return proc


def _a_prefix_of(path: Path, ref: xr.Dataset) -> tuple[int, dict]:
    """The checkpoint at ``path``: its evaluations are the reference run's first ones and
    its pending input the reference's next; returns (evaluations, state)."""
    results, state = ckpt.read(path)
    n = results.sizes.get("iteration", 0)
    np.testing.assert_array_equal(results["x"].values, ref["x"].values[:n])
    np.testing.assert_array_equal(results["y"].values, ref["y"].values[:n])
    for i, p in enumerate(state["pending"]):
        np.testing.assert_array_equal(np.ravel(p["x"]), ref["x"].values[n + i])
    return n, state


def _same_run(out: Path, ref: xr.Dataset) -> None:
    done = xr.load_dataset(out)
    np.testing.assert_array_equal(done["x"].values, ref["x"].values)
    np.testing.assert_array_equal(done["y"].values, ref["y"].values)
    assert ref.sizes["iteration"] == done.sizes["iteration"]


# kill point, then what the checkpoint holds: evaluations, pending inputs, and what the
# killed write left: nothing, a torn temporary file, or a complete one with (n, pending)
CLI_KILLS = [
    ("evaluated:2", 1, 1, None),  # in the initial design
    ("told:4", 4, 0, None),
    ("mid-write:6", 5, 1, "torn"),
    ("before-rename-ask:8", 7, 0, (7, 1)),
    ("before-rename:10", 9, 1, (10, 0)),
    ("evaluated:12", 11, 1, None),  # chosen by the model
]


def test_kills_after_an_evaluation_and_inside_checkpoint_writes_resume_to_the_same_run(tmp_path):
    """``pp-decomp run`` killed six times, each time resumed: the uninterrupted run's choices."""
    args = ["run", "--problem", "synthetic", "--strategy", "d-gpucb", "--iterations", "14"]
    args += ["--init", "4", "--seed", "9", "--inference", "map", "--quiet"]
    ref_path = tmp_path / "ref" / "ref.nc"
    _child(["cli", *args, "--out", str(ref_path)])
    ref = xr.load_dataset(ref_path)
    out = tmp_path / "killed.nc"
    for kill, n, pending, left in CLI_KILLS:
        resume = ["--resume"] if out.exists() else []
        proc = _child(["cli", *args, "--out", str(out), *resume], kill)
        assert "resuming" in proc.stdout or not resume
        # nothing told before the kill is lost, nothing after it is half-kept
        got, state = _a_prefix_of(out, ref)
        assert (got, len(state["pending"])) == (n, pending), kill
        stray = _stray(tmp_path)
        if left is None:
            assert stray == [], kill
            continue
        assert len(stray) == 1 and stray[0].startswith(".killed.nc.tmp"), (kill, stray)
        if left == "torn":
            with pytest.raises(CheckpointError, match="not a readable"):
                ckpt.read(tmp_path / stray[0])
        else:  # the write was complete but for its rename
            tmp_n, tmp_state = _a_prefix_of(tmp_path / stray[0], ref)
            assert (tmp_n, len(tmp_state["pending"])) == left, kill
    _child(["cli", *args, "--out", str(out), "--resume"])
    _same_run(out, ref)
    assert _stray(tmp_path) == []  # the killed writes' temporary files were removed


@pytest.mark.slow
def test_kills_with_a_background_refit_in_flight_resume_to_the_same_run(tmp_path):
    """The fast path (inference="nuts") killed with a refit running in its thread: just
    launched, then launched and recorded in the checkpoint; the resumed run relaunches
    what the file holds and makes the uninterrupted run's choices."""
    ref_path = tmp_path / "ref" / "ref.nc"
    _child(["fast", str(ref_path), "9"])
    ref = xr.load_dataset(ref_path)
    out = tmp_path / "killed.nc"

    def jobs(state) -> int:
        return sum(c["job"] is not None for c in state["updater"].values())

    _child(["fast", str(out), "9"], "refit-started:1")
    n1, state = _a_prefix_of(out, ref)
    assert n1 >= 4 and jobs(state) == 0  # the first refit was not recorded yet
    _child(["fast", str(out), "9"], "refit-recorded:2")
    n2, state = _a_prefix_of(out, ref)
    assert n2 >= n1 and jobs(state) >= 1 and len(state["pending"]) == 1
    _child(["fast", str(out), "9"])
    _same_run(out, ref)
    assert _stray(tmp_path) == []


def test_retries_count_the_failures_within_the_neighbourhood_an_input_excludes():
    from pp_decomp.loop.state import FailureLog
    from pp_decomp.optim import BOX_RADIUS

    log = FailureLog(2, max_retries=1)
    scale = np.array([2.0, 1.0])
    for x in ([0.5, 0.5], [0.5 + 1e-8, 0.5], [1.2, 0.2]):
        log.record(np.array(x), "crashed", 3, "acquisition")
    # a hair apart: one input that failed twice, excluded; the third failed once
    np.testing.assert_array_equal(log.excluded(scale, BOX_RADIUS), log.X[:2])
    log.record(np.array([1.2 + 1.5 * BOX_RADIUS * 2.0, 0.2]), "crashed", 3, "acquisition")
    assert len(log.excluded(scale, BOX_RADIUS)) == 2  # 1.5 radii away: another input
    assert len(FailureLog(2).excluded(scale)) == 0
