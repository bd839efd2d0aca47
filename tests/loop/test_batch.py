"""Batches and asynchronous evaluation (issue 20): ask(q), hallucinated pending
inputs, pending inputs in the checkpoint, K evaluations in flight on Dask."""

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

from pp_decomp import ComponentGP, Optimizer
from pp_decomp.acquisition.surrogate import HallucinatedGP
from pp_decomp.components.posterior.batched import GPPosterior
from pp_decomp.loop import checkpoint as ckpt
from pp_decomp.loop import workers as workers_mod
from pp_decomp.models import get_problem

ROOT = Path(__file__).resolve().parents[2]
BATCH = ["d-gpucb", "d-gpucb-mc", "d-gpucb-lipschitz", "d-ei", "d-thompson", "gp-ucb", "gp-mi"]


@pytest.fixture(scope="module")
def problem():
    return get_problem("synthetic", seed=3, n_components=3, n_points=150)


def _tell_all(opt, problem, X):
    for x in X:
        opt.tell(x, problem.evaluate(x[None], seed=0)[0])


def test_hallucinated_variance_is_the_gp_conditioned_on_its_own_mean_at_the_pending(problem):
    rng = np.random.default_rng(0)
    X = problem.domain.X[rng.choice(problem.domain.size, 8, replace=False)]
    gp = ComponentGP(bounds=problem.domain.bounds).fit(X, problem.evaluate(X, seed=1)[:, 0])
    P, Xq = problem.domain.X[[10, 70]], problem.domain.X[::7]
    hallucinated = HallucinatedGP(gp, P)
    # the direct route: refactorise with P observed at the posterior mean (same draws)
    post = gp.posterior
    Ps, Xs = gp.scale_X(P), gp.scale_X(Xq)
    mean_P = post.per_draw(Ps)[0][0]
    direct = GPPosterior(
        gp.kernel,
        np.vstack([post.X, Ps]),
        np.concatenate([post.y, mean_P]),
        gp.draws,
        jitter=post.jitter,
        mean_var=post.mean_var,
    )
    mean_d, var_d = direct.per_draw(Xs)
    mean_h, var_h = hallucinated.predict_per_draw(Xq)
    np.testing.assert_allclose(mean_h, gp.y_mean + gp.y_std * mean_d, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(var_h, gp.y_std**2 * var_d, rtol=1e-3, atol=1e-9)
    assert np.all(var_h <= gp.predict_per_draw(Xq)[1] + 1e-12)
    # the joint covariance agrees with the marginal variances, and samples follow it
    mean_j, cov_j = hallucinated.joint_predict_per_draw(Xq)
    np.testing.assert_allclose(np.diagonal(cov_j, axis1=1, axis2=2), var_h, rtol=1e-6, atol=1e-12)
    draws = hallucinated.sample(Xq, 4000, seed=2, joint=True)
    # atol: the sampler's Cholesky jitter, 1e-6 of the largest variance
    np.testing.assert_allclose(draws.var(0), var_h[0], rtol=0.1, atol=2e-6 * var_h[0].max())


@pytest.mark.parametrize("strategy", BATCH)
def test_ask_q_returns_q_distinct_inputs_and_keeps_them_pending(problem, strategy):
    opt = Optimizer(problem, strategy, n_init=4, inference="map", seed=2, mc_samples=64)
    _tell_all(opt, problem, opt.ask(4))
    X = opt.ask(3)
    assert X.shape == (3, problem.dim) and len(np.unique(X, axis=0)) == 3
    np.testing.assert_array_equal(opt.ask(3), X)  # asking again returns the same inputs
    np.testing.assert_array_equal(opt.ask(), X[0])
    _tell_all(opt, problem, X[[1]])  # results arrive in any order
    X2 = opt.ask(3)
    np.testing.assert_array_equal(X2[:2], X[[0, 2]])
    # new, not a pending input (an observed one may be asked again: noisy systems)
    assert not any(np.allclose(X2[2], x) for x in X2[:2])
    assert opt.n == 5 and len(opt.pending) == 3


def test_asking_more_than_the_free_candidates_is_refused_before_any_fit(problem):
    opt = Optimizer(problem, "d-gpucb", n_init=4, inference="map", seed=2)
    with pytest.raises(ValueError, match=r"ask\(q=151\) needs 151 new candidate\(s\) but only 150"):
        opt.ask(151)
    assert len(opt.pending) == 0
    with pytest.raises(ValueError, match="q must be"):
        opt.ask(0)


def test_strategies_that_choose_one_at_a_time_refuse_batches_by_name():
    prob = get_problem("kandasamy-10-3-3", seed=0)
    opt = Optimizer(prob, "add-gp-ucb", n_init=3, inference="map", seed=0)
    with pytest.raises(ValueError, match="'add-gp-ucb' chooses one input at a time"):
        opt.ask(2)
    with pytest.raises(ValueError, match="workers=2: strategy 'add-gp-ucb'"):
        opt.run(10, workers=2)
    assert opt.n == 0 and len(opt.pending) == 0


def test_q1_asks_make_the_sequential_choices(problem):
    a = Optimizer(problem, "d-gpucb", n_init=4, inference="map", seed=6)
    b = Optimizer(problem, "d-gpucb", n_init=4, inference="map", seed=6)
    for _ in range(8):
        xa, xb = a.ask(), b.ask(1)[0]
        np.testing.assert_array_equal(xa, xb)
        _tell_all(a, problem, [xa])
        _tell_all(b, problem, [xb])


def test_pending_inputs_are_checkpointed_and_resume_to_the_same_later_choices(problem, tmp_path):
    kw = dict(n_init=4, inference="map", seed=8)
    ref = Optimizer(problem, "d-gpucb", **kw)
    _tell_all(ref, problem, ref.ask(4))
    first = ref.ask(3)
    _tell_all(ref, problem, first[[2]])
    ref_next = ref.ask(3)

    path = tmp_path / "run.nc"
    opt = Optimizer(problem, "d-gpucb", checkpoint=path, **kw)
    _tell_all(opt, problem, opt.ask(4))
    np.testing.assert_array_equal(opt.ask(3), first)
    opt.close()  # the driver stops with three inputs in flight
    _, state = ckpt.read(path)
    assert len(state["pending"]) == 3
    resumed = Optimizer.resume(path, problem)
    np.testing.assert_array_equal(resumed.pending.X, first)
    _tell_all(resumed, problem, first[[2]])
    np.testing.assert_array_equal(resumed.ask(3), ref_next)
    resumed.close()


SCRIPT = textwrap.dedent(
    """
    import os, signal, sys
    import numpy as np
    from pp_decomp import Box, Optimizer, Problem

    def components(X):
        # the first two evaluations on workers kill their worker: both workers
        # when they start together, so nothing held only by workers survives
        if os.getpid() != int(os.environ["DRIVER_PID"]):
            for k in range(2):
                try:
                    os.close(os.open(f"{sys.argv[2]}.{k}", os.O_CREAT | os.O_EXCL))
                except FileExistsError:
                    continue
                os.kill(os.getpid(), signal.SIGKILL)
        return np.stack([np.sin(3 * X[:, 0]), np.cos(2 * X[:, 1])], axis=1)

    if __name__ == "__main__":
        os.environ["DRIVER_PID"] = str(os.getpid())
        problem = Problem(Box([[0, 1], [0, 1]]), components, n_components=2,
                          weights=[1.0, 1.0], name="killer")
        opt = Optimizer(problem, "d-gpucb", n_init=3, inference="map", seed=0,
                        checkpoint=sys.argv[1])
        opt.run(8, workers=2, on_error="record")
    """
)


# A guard against a hung run, not a claim about speed: alone each subprocess takes
# 15-35 s, but on a machine running two CIs at once the Dask workers' start and
# restart took over 300 s (session 82), so the guard is set far above that.
HANG_GUARD = 900


def _env():
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    return env


def _run(cmd, check: bool = False) -> subprocess.CompletedProcess:
    """``cmd`` in a session of its own, killed with its Dask workers (its process
    group) past HANG_GUARD: a hung run must not leave workers loading the machine."""
    proc = subprocess.Popen(
        cmd,
        env=_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(timeout=HANG_GUARD)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate(timeout=60)
        pytest.fail(f"{cmd} hung past {HANG_GUARD} s; its stderr ends:\n{err[-3000:]}")
    if check and proc.returncode:
        pytest.fail(f"{cmd} exited {proc.returncode}; its stderr ends:\n{err[-3000:]}")
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


def test_workers_killed_mid_evaluation_have_their_evaluations_retried(tmp_path):
    script = tmp_path / "killer.py"
    script.write_text(SCRIPT)
    out, mark = tmp_path / "run.nc", tmp_path / "killed-once"
    proc = _run([sys.executable, str(script), str(out), str(mark)])
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert Path(f"{mark}.0").exists() and Path(f"{mark}.1").exists()  # workers died
    ds = xr.load_dataset(out)
    assert ds.sizes["iteration"] == 8 and ds.sizes.get("failure", 0) == 0


def test_a_result_that_cannot_be_fetched_is_evaluated_again_not_waited_for(problem, monkeypatch):
    from distributed import Future

    fetch, timed_out = Future.result, []

    def first_fetch_times_out(self, timeout=None):
        assert timeout == workers_mod.GATHER_TIMEOUT  # the run never waits unbounded
        if not timed_out:
            timed_out.append(self.key)
            raise TimeoutError
        return fetch(self, timeout=timeout)

    monkeypatch.setattr(Future, "result", first_fetch_times_out)
    opt = Optimizer(problem, "d-gpucb", n_init=3, inference="map", seed=0)
    with pytest.warns(UserWarning, match="could not be fetched within 120 s; submitted again"):
        opt.run(6, workers=2)
    assert timed_out and opt.n == 6 and len(opt.pending) == 0
    assert opt.results().sizes.get("failure", 0) == 0
    # every result told is its own key's evaluation: the resubmitted one drew the same noise
    keys = [r["key"] for r in opt.state.records]
    assert len(set(keys)) == 6
    for x, y, key in zip(opt.X, opt.Y, keys, strict=True):
        again, _ = workers_mod.evaluate_task(problem, x, 0, key, "raise", 0)
        np.testing.assert_array_equal(y, again)


class _Future:
    """A finished Dask future whose result raises ``TimeoutError``: the fetch's
    (status ``finished``) or the evaluation's own (status ``error``)."""

    def __init__(self, status):
        self.status = status

    def result(self, timeout=None):
        raise TimeoutError("simulated")


def test_an_evaluations_own_timeout_is_raised_and_resubmissions_are_capped():
    from pp_decomp.loop.evaluate import ErrorPolicy

    x, cap = np.array([0.5]), workers_mod.MAX_RESUBMITS
    with pytest.raises(TimeoutError, match="simulated"):  # the simulator's: not resubmitted
        workers_mod.gathered(_Future("error"), x, ErrorPolicy("record"), 0)
    with pytest.warns(UserWarning, match="submitted again"):
        assert workers_mod.gathered(_Future("finished"), x, ErrorPolicy("raise"), 0) is None
    y, reason = workers_mod.gathered(_Future("finished"), x, ErrorPolicy("record"), cap)
    assert y is None and f"could not be fetched in {cap + 1} submissions" in reason
    with pytest.raises(RuntimeError, match=f"in {cap + 1} submissions"):
        workers_mod.gathered(_Future("finished"), x, ErrorPolicy("raise"), cap)


def test_a_cluster_left_without_workers_stops_the_run_saying_so(monkeypatch):
    import time

    monkeypatch.setattr(workers_mod, "NO_WORKER_LIMIT", 0.0)
    workers_mod.WorkerWatch(lambda: 1).check()  # workers alive: nothing to say
    watch = workers_mod.WorkerWatch(lambda: 0)
    watch.check()  # the clock starts when the last worker is gone
    time.sleep(0.01)
    with pytest.raises(RuntimeError, match="no worker for 0 s.*pending in the checkpoint"):
        watch.check()


def test_an_embedded_cluster_left_without_workers_gets_new_ones(monkeypatch):
    import time

    from distributed import Client, LocalCluster

    monkeypatch.setattr(workers_mod, "REVIVE_AFTER", 0.0)
    cluster = LocalCluster(n_workers=1, threads_per_worker=1, dashboard_address=":0")
    with cluster, Client(cluster) as client:
        alive = lambda: len(client.scheduler_info()["workers"])  # noqa: E731
        # the state CI met: the worker gone for good, its nanny not restarting it
        cluster.scale(0)
        while alive():
            time.sleep(0.1)
        watch = workers_mod.WorkerWatch(alive, revive=workers_mod._reviver(cluster, 2))
        watch.check()
        time.sleep(0.01)
        with pytest.warns(UserWarning, match="new workers are started"):
            watch.check()
        client.wait_for_workers(2, timeout=HANG_GUARD)
        assert client.submit(sum, [1, 2]).result(timeout=HANG_GUARD) == 3


UNGUARDED = textwrap.dedent(
    """
    import numpy as np
    from pp_decomp import Box, Optimizer, Problem

    def components(X):
        return np.stack([np.sin(3 * X[:, 0]), np.cos(2 * X[:, 1])], axis=1)

    problem = Problem(Box([[0, 1], [0, 1]]), components, n_components=2, weights=[1.0, 1.0])
    Optimizer(problem, "d-gpucb", n_init=3, inference="map", seed=0).run(4, workers=2)
    """
)


def test_a_script_every_worker_would_run_again_is_refused_before_a_worker_starts(tmp_path):
    script = tmp_path / "unguarded.py"
    script.write_text(UNGUARDED)
    proc = _run([sys.executable, str(script)])
    assert proc.returncode == 1
    line = UNGUARDED.splitlines().index(UNGUARDED.strip().splitlines()[-1]) + 1
    assert f"{script}, line {line}, runs the optimiser outside an" in proc.stderr
    assert "Nanny" not in proc.stderr  # refused before any worker started


@pytest.mark.parametrize(
    "source, line, guarded",
    [
        ("run()\n", 1, False),
        ("# __main__ named in a comment\nrun()\n", 2, False),
        ('if __name__ == "__main__":\n    run()\n', 2, True),
        ('if "__main__" == __name__ and ok:\n    x = 1\n    run()\n', 3, True),
        ('run()\nif __name__ == "__main__":\n    pass\n', 1, False),
        ('if __name__ != "__main__":\n    run()\n', 2, False),
        ('def f():\n    if __name__ == "__main__":\n        run()\n', 3, False),
    ],
)
def test_a_run_is_guarded_only_in_the_body_of_a_top_level_main_test(source, line, guarded):
    import ast

    from pp_decomp._main_guard import guarded as is_guarded

    assert is_guarded(ast.parse(source), line) is guarded


def test_a_nanny_restarting_its_worker_is_left_to_it_not_replaced():
    from types import SimpleNamespace

    from distributed.core import Status

    assert {s.name for s in Status} >= workers_mod.CLOSED
    scaled: list[int] = []
    nanny = lambda status: SimpleNamespace(status=status)  # noqa: E731
    workers = {0: nanny(Status.closed), 1: nanny(Status.running)}  # 1 restarting its worker
    cluster = SimpleNamespace(scale=scaled.append, workers=workers, worker_spec=dict(workers))
    revive = workers_mod._reviver(cluster, 2)
    assert revive() is False and scaled == []
    workers[1] = nanny(Status.closing)
    cluster.worker_spec[2] = {}  # a nanny the cluster is still starting
    assert revive() is False and scaled == []
    del cluster.worker_spec[2]
    assert revive() is True and scaled == [0, 2]


def test_the_watch_warns_only_when_new_workers_were_started(monkeypatch):
    import warnings

    monkeypatch.setattr(workers_mod, "REVIVE_AFTER", 0.0)
    answers = [False, True]
    watch = workers_mod.WorkerWatch(lambda: 0, revive=lambda: answers.pop(0))
    watch.check()  # the clock starts when the last worker is gone
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        watch.check()  # a nanny restarting its worker: nothing started, nothing said
    with pytest.warns(UserWarning, match="nannies have closed: new workers are started"):
        watch.check()
    assert answers == []


def test_an_embedded_clusters_scheduler_keeps_a_lost_worker_an_hour_and_a_users_longer():
    import dask
    from dask.utils import parse_timedelta

    from pp_decomp._runtime import dask_client

    key = "distributed.deploy.lost-worker-timeout"
    default = dask.config.get(key)
    for mine, kept in ((None, 3600.0), ("2h", 7200.0)):
        with dask.config.set({key: mine or default}), dask_client(None, 1) as client:
            # read on the cluster's own thread, where a worker's removal reads it
            patience = client.run_on_scheduler(lambda: dask.config.get(key))
        assert parse_timedelta(patience) == kept > workers_mod.NO_WORKER_LIMIT
    assert dask.config.get(key) == default


# The driver kills its process group (itself and its Dask workers, SIGKILL) once its
# 8th tell returned, with evaluations in flight: a kill at a chosen point, not after a
# wall-clock wait, which on a busy machine may land anywhere or after the run ended.
KILL_DRIVER = textwrap.dedent(
    """
    import os, signal, sys
    import pp_decomp.apps.cli
    from pp_decomp.loop.optimizer import Optimizer

    def tell(self, x, y, _tell=Optimizer.tell):
        _tell(self, x, y)
        if self.n == 8:  # its checkpoint written, the other inputs in flight pending
            os.killpg(0, signal.SIGKILL)

    if __name__ == "__main__":
        Optimizer.tell = tell
        sys.exit(pp_decomp.apps.cli.main(sys.argv[1:]))
    """
)


def test_a_killed_async_driver_resumes_with_no_evaluation_lost(tmp_path):
    args = ["--problem", "synthetic", "--strategy", "d-gpucb", "--iterations", "16"]
    args += ["--init", "4", "--seed", "5", "--inference", "map", "--quiet", "--workers", "3"]
    cmd = [sys.executable, "-m", "pp_decomp.apps.cli", "run", *args]
    out, script = tmp_path / "async.nc", tmp_path / "driver.py"
    script.write_text(KILL_DRIVER)
    # a session of its own: the driver and its Dask workers die together
    proc = _run([sys.executable, str(script), "run", *args, "--out", str(out)])
    assert proc.returncode == -signal.SIGKILL, proc.stderr[-3000:]
    assert xr.load_dataset(out).sizes["iteration"] == 8
    killed, state = ckpt.read(out)
    pending = np.array([p["x"] for p in state["pending"]])
    assert len(pending) >= 1  # evaluations were in flight when the driver died
    _run([*cmd, "--out", str(out), "--resume"], check=True)
    done = xr.load_dataset(out)
    n = killed.sizes["iteration"]
    assert done.sizes["iteration"] == 16
    np.testing.assert_array_equal(done["x"].values[:n], killed["x"].values)
    np.testing.assert_array_equal(done["y"].values[:n], killed["y"].values)
    later = done["x"].values[n:]
    for x in pending:  # every input in flight at the kill was evaluated after the resume
        assert any(np.allclose(x, y) for y in later)


def test_simulated_async_runs_keep_q_in_flight_and_finish_sooner(problem):
    from pp_decomp.loop.simulate import simulate_async

    def simulate(opt, n_iter, q, durations):
        return simulate_async(opt.setup, opt.state, opt.steps, n_iter, q, durations)

    durations = np.random.default_rng(0).lognormal(0, 0.5, 40)
    runs = {
        q: simulate(
            Optimizer(problem, "d-gpucb", n_init=4, inference="map", seed=3), 12, q, durations
        )
        for q in (1, 4)
    }
    for ds in runs.values():
        assert ds.sizes["iteration"] == 12 and np.all(np.diff(ds["finish_time"].values) >= 0)
    # one at a time the clock is the sum of the durations; four at a time it is shorter
    np.testing.assert_allclose(runs[1]["finish_time"].values, np.cumsum(durations[:12]))
    assert runs[4]["finish_time"].values[-1] < 0.5 * runs[1]["finish_time"].values[-1]
    with pytest.raises(ValueError, match="durations must hold at least n_iter=12"):
        simulate(Optimizer(problem, "d-gpucb", seed=0), 12, 2, durations[:5])


def test_run_refuses_bad_workers_before_any_evaluation(problem):
    opt = Optimizer(problem, "d-gpucb", n_init=4, inference="map", seed=0)
    with pytest.raises(ValueError, match="workers must be"):
        opt.run(6, workers=0)
    with pytest.raises(TypeError, match="scheduler must be an address string"):
        opt.run(6, scheduler=8786)
    assert opt.n == 0


def test_a_batch_larger_than_the_design_asks_random_inputs_until_two_results_are_in(problem):
    opt = Optimizer(problem, "d-gpucb", n_init=5, inference="map", seed=0)
    X = opt.ask(8)
    assert len(np.unique(X, axis=0)) == 8
    assert [rec["phase"] for _, rec in opt.pending.items] == ["init"] * 8
    _tell_all(opt, problem, X[:2])
    opt.ask(7)  # two results: the design is still in flight, but a GP can be fitted
    assert opt.pending.items[-1][1]["phase"] == "acquisition"


def test_an_unreachable_scheduler_is_refused_by_address_before_any_evaluation(
    problem, capsys, tmp_path, monkeypatch
):
    import dask.distributed
    from dask.utils import parse_timedelta

    from pp_decomp.apps.cli import main

    timeouts, real = [], dask.distributed.Client

    def client(*args, **kwargs):
        timeouts.append(kwargs.get("timeout"))
        return real(*args, **kwargs)

    monkeypatch.setattr(dask.distributed, "Client", client)
    opt = Optimizer(problem, "d-gpucb", n_init=4, inference="map", seed=0)
    with pytest.raises(ConnectionError, match=r"scheduler='tcp://127.0.0.1:9'"):
        opt.run(6, scheduler="tcp://127.0.0.1:9")
    # it fails fast: the connection is given seconds, not Dask's default 30 s (checked
    # on the timeout given, not on a wall clock, which a busy machine stretches)
    assert opt.n == 0 and timeouts and parse_timedelta(timeouts[0]) <= 5
    args = ["bench", "--problems", "synthetic", "--strategies", "d-gpucb", "--trials", "1"]
    args += ["--iterations", "6", "--scheduler", "tcp://127.0.0.1:9", "--quiet"]
    assert main([*args, "--out", str(tmp_path / "b")]) == 2
    assert "no Dask scheduler answered" in capsys.readouterr().err


def test_async_runs_keep_only_the_design_in_flight_then_grow_the_batch(problem):
    from pp_decomp.loop.ask import in_flight

    opt = Optimizer(problem, "d-gpucb", n_init=3, inference="map", seed=0)
    assert in_flight(opt.state, 6, 20) == 3  # the design only, no random fill beside it
    X = opt.ask(3)
    _tell_all(opt, problem, X[:1])
    assert in_flight(opt.state, 6, 20) == 2  # the two design inputs still out, nothing new
    _tell_all(opt, problem, X[1:])
    sizes = []
    for _ in range(6):
        sizes.append(in_flight(opt.state, 6, 20))
        _tell_all(opt, problem, opt.ask(sizes[-1])[:1])
    assert sizes == [1, 2, 3, 4, 5, 6]  # one more than the model-chosen results told
    assert in_flight(opt.state, 6, opt.n + 2) == 2  # never more than the evaluations still needed


def test_simulated_async_run_asks_no_random_input_beside_the_design(problem):
    from pp_decomp.loop.simulate import simulate_async

    durations = np.random.default_rng(1).lognormal(0, 0.5, 40)
    opt = Optimizer(problem, "d-gpucb", n_init=3, inference="map", seed=1)
    ds = simulate_async(opt.setup, opt.state, opt.steps, 12, 6, durations)
    assert list(ds["phase"].values[:3]) == ["init"] * 3
    assert set(ds["phase"].values[3:]) == {"acquisition"}


@pytest.mark.parametrize("key", ["d-gpucb-map", "d-gpucb-mc-map"])
def test_an_async_run_with_one_worker_makes_the_stored_reference_choices(key, monkeypatch):
    import json

    from pp_decomp.loop.simulate import simulate_async

    monkeypatch.syspath_prepend(str(ROOT / "tests" / "loop" / "reference"))
    import runs

    _, name, strategy, iterations, kw = next(r for r in runs.RUNS if r[0] == key)
    opt = Optimizer(runs.problem(name), strategy, **kw)
    ds = simulate_async(opt.setup, opt.state, opt.steps, iterations, 1, np.ones(iterations))
    stored = json.loads(runs.CHOICES.read_text())[key]
    np.testing.assert_array_equal(ds["x"].values, np.asarray(stored))
