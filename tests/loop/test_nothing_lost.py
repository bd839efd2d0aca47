"""Bad output paths, damaged files, a resume on the wrong problem, ``--resume``
without a file, a told input told again, a non-finite optimum: each refused early
by name (or, for the resume, started), with no traceback and nothing lost."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import xarray as xr

import pp_decomp as ppd
from pp_decomp.apps.cli import main

RUN = ["run", "--problem", "synthetic", "--iterations", "6", "--init", "4", "--quiet"]


def _cli(capsys, *args) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, out, err


def test_an_out_path_under_a_file_is_refused_before_the_run(tmp_path, capsys):
    afile = tmp_path / "afile"
    afile.write_text("not a folder")
    code, _, err = _cli(capsys, *RUN, "--out", str(afile / "x.nc"))
    assert code == 2 and f"{afile} is a file, not a folder" in err
    code, _, err = _cli(capsys, *RUN, "--out", str(tmp_path))
    assert code == 2 and "is a folder; give a file name" in err


def test_an_out_path_nobody_can_write_is_refused_before_the_run(capsys):
    code, _, err = _cli(capsys, *RUN, "--out", "/proc/pp-decomp-run.nc")
    assert code == 2 and "cannot write in /proc" in err


def test_plot_of_a_file_that_is_not_a_results_file_is_refused(tmp_path, capsys):
    junk = tmp_path / "junk.nc"
    junk.write_bytes(np.random.default_rng(0).bytes(4096))
    code, _, err = _cli(capsys, "plot", str(junk))
    assert code == 2 and "is not a pp_decomp results file" in err
    other = tmp_path / "other.nc"
    xr.Dataset({"a": ("x", [1.0, 2.0])}).to_netcdf(other, engine="h5netcdf")
    code, _, err = _cli(capsys, "plot", str(other))
    assert code == 2 and "no 'objective' variable" in err


def test_resume_without_a_file_starts_the_run_and_a_resume_of_it_goes_on(tmp_path, capsys):
    out = tmp_path / "first.nc"
    code, stdout, _ = _cli(capsys, *RUN, "--inference", "map", "--out", str(out), "--resume")
    assert code == 0 and "does not exist yet: starting a run there" in stdout
    ref = tmp_path / "ref.nc"
    assert _cli(capsys, *RUN, "--inference", "map", "--out", str(ref))[0] == 0
    np.testing.assert_array_equal(xr.load_dataset(out)["x"], xr.load_dataset(ref)["x"])
    longer = [a if a != "6" else "7" for a in RUN]
    code, stdout, _ = _cli(capsys, *longer, "--inference", "map", "--out", str(out), "--resume")
    assert code == 0 and "resuming" in stdout and xr.load_dataset(out).sizes["iteration"] == 7


def test_resume_on_another_problem_names_both(tmp_path, capsys):
    out = tmp_path / "run.nc"
    assert _cli(capsys, *RUN, "--inference", "map", "--out", str(out))[0] == 0
    args = ["run", "--problem", "branin", "--iterations", "8", "--out", str(out), "--resume"]
    code, _, err = _cli(capsys, *args)
    assert code == 2 and "holds a run of problem 'synthetic'; --problem 'branin' was asked" in err
    from pp_decomp.models import get_problem

    with pytest.raises(ValueError, match="holds a run of problem 'synthetic'; 'branin' was given"):
        ppd.Optimizer.resume(out, get_problem("branin"))


def _problem(**kw):
    return ppd.Problem(
        domain=ppd.Box([0, 0], [1, 1]),
        components=lambda X: np.c_[X[:, 0], X[:, 1]],
        n_components=2,
        g=lambda F: F[..., 0] + F[..., 1],
        **kw,
    )


def test_a_non_finite_optimum_is_refused():
    for bad in (float("nan"), float("inf")):
        with pytest.raises(ValueError, match="optimum must be a finite number or None"):
            _problem(optimum=bad)
    with pytest.raises(TypeError, match="optimum must be a number or None; got 'high'"):
        _problem(optimum="high")


@pytest.mark.parametrize("size", [1, 3])
def test_a_candidate_set_too_small_for_the_design_is_refused(size):
    problem = ppd.Problem(
        domain=ppd.CandidateSet(np.random.default_rng(0).random((size, 2))),
        components=lambda X: np.c_[X[:, 0], X[:, 1]],
        n_components=2,
        g=lambda F: F[..., 0] + F[..., 1],
        name="tiny",
    )
    with pytest.raises(
        ValueError, match=f"n_init=5 exceeds the {size} candidates of problem 'tiny'"
    ):
        ppd.Optimizer(problem)


def test_a_result_told_twice_warns_and_is_kept_a_replicate_said_so_does_not():
    problem = _problem()
    opt = ppd.Optimizer(problem, n_init=2, seed=0)
    x = opt.ask()
    y = problem.evaluate(x[None])[0]
    opt.tell(x, y)
    with pytest.warns(UserWarning, match=r"was told before \(evaluation 1\)"):
        opt.tell(x, y)  # a notebook cell run twice
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        opt.tell(x, y, replicate=True)
    assert opt.n == 3  # nothing dropped


def _typed_inputs(tmp_path) -> list[list[str]]:
    """Inputs a user can type that each command must refuse without a traceback."""
    afile = tmp_path / "afile"
    afile.write_text("a file")
    junk = tmp_path / "junk.nc"
    junk.write_bytes(np.random.default_rng(1).bytes(2048))
    run = ["run", "--problem", "synthetic", "--out", str(tmp_path / "r.nc")]
    bench = ["bench", "--problems", "synthetic", "--strategies", "d-gpucb", "--quiet"]
    bench_out = ["--out", str(tmp_path / "b")]
    cal = ["calibration", "--problem", "synthetic", "--out", str(tmp_path / "c.nc")]
    return [
        [*run, "--iterations", "-1"],
        [*run, "--iterations", "ten"],
        [*run, "--iterations", "8", "--init", "1"],
        [*run, "--iterations", "8", "--seed", "-3"],
        [*run, "--iterations", "8", "--strategy", "no-such"],
        [*run, "--iterations", "8", "--inference", "laplace"],
        [*run, "--iterations", "8", "--workers", "0"],
        [*run, "--iterations", "8", "--prior", "garbage"],
        [*run, "--iterations", "8", "--prior", "ls_scale=-1"],
        [*run, "--iterations", "8", "--kernel", "cosine"],
        ["run", "--problem", "no-such", "--iterations", "8", "--out", str(tmp_path / "n.nc")],
        ["run", "--problem", "synthetic", "--iterations", "8", "--out", str(afile / "x.nc")],
        ["run", "--problem", "synthetic", "--iterations", "8", "--out", str(junk), "--resume"],
        [*bench, "--trials", "0", *bench_out],
        [*bench, "--trials", "2", "--iterations", "1", *bench_out],
        ["bench", "--problems", "no-such", "--strategies", "d-gpucb", *bench_out],
        [*bench, "--preset", "no-such", *bench_out],
        [*bench, "--trials", "1", "--additive", "junk", *bench_out],
        [*bench, "--trials", "1", "--out", str(afile)],
        [*cal, "--seeds", "0"],
        [*cal, "--prior", "junk"],
        ["calibration", "--problem", "no-such", "--out", str(tmp_path / "c2.nc")],
        ["calibration", "--problem", "synthetic", "--out", str(afile / "c.nc")],
        ["plot", str(tmp_path / "missing.nc")],
        ["plot", str(junk)],
        ["plot", str(tmp_path)],
    ]


def test_no_command_ends_in_a_traceback_for_typed_input(tmp_path, capsys):
    for args in _typed_inputs(tmp_path):
        try:
            code = main(args)
        except SystemExit as stop:  # argparse's own usage errors
            code = stop.code
        out, err = capsys.readouterr()
        assert code not in (0, None), args
        assert "Traceback" not in err and err.strip(), (args, err)


def test_open_on_a_checkpoint_of_another_strategy_and_seed_names_both(tmp_path):
    problem = _problem(name="two")
    path = tmp_path / "run.nc"
    ppd.Optimizer.open(path, problem, strategy="d-gpucb-mc", seed=1, n_init=2).run(3)
    with pytest.raises(ValueError, match=r"strategy: file 'd-gpucb-mc', asked 'gp-ucb'.*seed: "):
        ppd.Optimizer.open(path, problem, strategy="gp-ucb", seed=2, n_init=2)
    assert ppd.Optimizer.open(path, problem, strategy="d-gpucb-mc", seed=1, n_init=2).n == 3


def test_a_run_stopped_by_a_failing_input_resumes_past_it_recording_it(tmp_path):
    armed, bad = [], []  # the problem's own check of g runs the system once, unarmed

    def system(X):
        # the 5th input crashes the simulator, and crashes it whenever it comes again
        if armed:
            armed.append(X[0])
            if len(armed) == 6 or any(np.allclose(X[0], b) for b in bad):
                bad.append(X[0])
                raise RuntimeError("the simulator crashed")
        return np.c_[X[:, 0], X[:, 1]]

    problem = ppd.Problem(
        domain=ppd.Box([0, 0], [1, 1]),
        components=system,
        n_components=2,
        g=lambda F: F[..., 0] + F[..., 1],
        name="crashy",
    )
    armed.append(True)
    path = tmp_path / "run.nc"
    opt = ppd.Optimizer(problem, n_init=3, seed=0, checkpoint=path)
    with pytest.raises(RuntimeError, match="the simulator crashed"):
        opt.run(12)
    kept = opt.n
    opt.close()
    again = ppd.Optimizer.resume(path, problem)
    assert again.n == kept  # everything told before the failure
    again.run(12, on_error="record")
    assert again.n == 12 and len(again.failures) == 1  # the input that failed, recorded


def test_ctrl_c_during_a_run_says_the_command_that_continues_it(tmp_path, capsys, monkeypatch):
    import shlex

    out = tmp_path / "my run.nc"  # a space: the command is quoted for the shell
    args = ["run", "--problem", "gp-sample-2d", "--init", "2", "--iterations", "4", "--quiet"]
    run = ppd.Optimizer.run

    def interrupted_after_three(self, n_iter, **kw):
        run(self, 3, **kw)
        raise KeyboardInterrupt

    with monkeypatch.context() as m:
        m.setattr(ppd.Optimizer, "run", interrupted_after_three)
        assert main([*args, "--overwrite", "--out", str(out)]) == 130
    err = capsys.readouterr().err
    assert f"every evaluation told so far is in the checkpoint {out};" in err
    command = err.split("continue the run with:\n  ")[1].strip()
    assert command == "pp-decomp " + shlex.join([*args, "--out", str(out), "--resume"])
    assert main(shlex.split(command)[1:]) == 0
    assert "resuming" in capsys.readouterr().out
    assert xr.load_dataset(out).sizes["iteration"] == 4


def test_resume_of_a_checkpoint_with_64_bytes_overwritten_is_one_line_naming_both_files(
    tmp_path, capsys
):
    out = tmp_path / "run.nc"
    assert _cli(capsys, *RUN, "--inference", "map", "--out", str(out))[0] == 0
    data = bytearray(out.read_bytes())
    # where the observations are stored: a file's free space may lie anywhere else
    at = data.find(np.ascontiguousarray(xr.load_dataset(out)["y"].values, "<f8").tobytes())
    assert at > 0
    data[at : at + 64] = b"\xff" * 64  # a disk error, or a program writing into it
    out.write_bytes(bytes(data))
    longer = [a if a != "6" else "7" for a in RUN]
    code, _, err = _cli(capsys, *longer, "--inference", "map", "--out", str(out), "--resume")
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert f"checkpoint {str(out)!r}" in err and "damaged" in err  # unreadable, or its checksum
    assert f"previous checkpoint {str(out) + '.prev'!r} is intact" in err


def test_a_unit_that_reads_like_a_time_passes_the_checksum_on_resume(tmp_path):
    """xarray decodes a variable whose units read "days since ..." into datetimes, which
    changed the values read back and failed the checksum of a valid checkpoint."""
    problem = ppd.Problem(
        domain=ppd.Box([0], [1]),
        components=lambda X: np.c_[np.sin(6 * X[:, 0])],
        n_components=1,
        weights=[1.0],
        units={"objective": "days since 2020-01-01", "components": ["days since 2020-01-01"]},
    )
    path = tmp_path / "run.nc"
    with ppd.Optimizer(problem, checkpoint=path, n_init=3, seed=0) as opt:
        opt.run(4)
    with ppd.Optimizer.resume(path, problem) as again:
        assert again.n == 4
