import numpy as np
import pytest

from pp_decomp import Box, CandidateSet, ComponentGP, HyperDraws, LinearComposition, Priors, Problem
from pp_decomp.validate import check_X, check_Y


def test_check_X_names_the_first_non_finite_value():
    with pytest.raises(ValueError, match=r"X must be finite.*index \(1, 0\)"):
        check_X(np.array([[0.0], [np.nan]]))


@pytest.mark.parametrize(
    "value,named",
    [
        (["a", "b"], "got 'a' at position 0, 'b' at position 1"),
        ([[1.0, "x"], [2.0, 3.0]], r"got 'x' at position \(0, 1\)"),
        ([[1.0, 2.0], [3.0]], "got .*, whose rows have unequal lengths"),
        (list("abcdefg"), "got 'a' at position 0, .*'e' at position 4 and 2 more$"),
    ],
)
def test_numeric_checks_name_the_entries_that_are_not_numbers(value, named):
    from pp_decomp.validate import as_float_array, check_y

    for check in (as_float_array, check_X, check_Y, check_y):
        with pytest.raises(TypeError, match=f"y must be numbers; {named}"):
            check(value, "y")


def test_check_Y_rejects_inf_and_row_mismatch():
    with pytest.raises(ValueError, match="Y must be finite"):
        check_Y(np.array([[0.0, np.inf], [1.0, 2.0]]))
    with pytest.raises(ValueError, match=r"Y has 3 row\(s\) but X has 2"):
        check_Y(np.zeros((3, 2)), n=2)
    with pytest.raises(ValueError, match=r"y must have 3 column\(s\)"):
        check_Y([[1.0, 2.0]], "y", n_components=3)


@pytest.mark.parametrize(
    ("X", "y", "match"),
    [
        (np.zeros((1, 1)), np.zeros(1), r"X needs at least 2 row\(s\)"),
        (np.array([[0.0], [np.nan]]), np.zeros(2), "X must be finite"),
        (np.zeros((3, 1)), np.array([0.0, np.inf, 1.0]), "y must be finite"),
        (np.zeros((3, 1)), np.zeros(4), r"y has 4 value\(s\) but X has 3"),
        (np.zeros((3, 2)), np.zeros(3), r"X must have 1 column\(s\)"),
        (np.zeros((3, 1, 1)), np.zeros(3), r"X must have shape \(n, d\)"),
    ],
)
def test_component_fit_rejects_bad_data_before_work(X, y, match):
    gp = ComponentGP("se", 1)
    with pytest.raises(ValueError, match=match):
        gp.fit(X, y)
    with pytest.raises(ValueError, match=match):
        gp.condition(X, y, HyperDraws([[0.3]], [1.0], [0.1]))


def test_component_rejects_bad_settings():
    with pytest.raises(ValueError, match="kernel must be one of"):
        ComponentGP("cubic", 1)
    with pytest.raises(ValueError, match="input_dim must be >= 1"):
        ComponentGP("se", 0)
    with pytest.raises(ValueError, match=r"bounds must have shape \(2, 2\)"):
        ComponentGP("se", 2, bounds=[0, 1])
    with pytest.raises(ValueError, match="upper > lower"):
        ComponentGP("se", 1, bounds=[[1.0], [0.0]])
    with pytest.raises(ValueError, match="Priors.sigma_beta must be"):
        Priors(sigma_beta=-1.0)
    for name in ("ls_loc", "sigma_loc"):  # any finite value, negative included
        assert getattr(Priors(**{name: -3.0}), name) == -3.0
        for bad in (float("nan"), float("inf")):
            with pytest.raises(ValueError, match=f"Priors.{name} must be finite; got {bad}"):
                Priors(**{name: bad})
    with pytest.raises(ValueError, match="inference must be one of"):
        ComponentGP("se", 1).fit(np.zeros((3, 1)), np.zeros(3), inference="vi")


def test_predict_before_fit_names_component():
    with pytest.raises(RuntimeError, match="component 'temp' is not fitted"):
        ComponentGP("se", 1, name="temp").predict(np.zeros((2, 1)))


def test_hyperdraws_validation():
    with pytest.raises(ValueError, match="sigma must be > 0"):
        HyperDraws([[0.3]], [1.0], [0.0])
    with pytest.raises(ValueError, match=r"eta must hold one value per draw \(S=2\)"):
        HyperDraws([[0.3], [0.2]], [1.0], [0.1, 0.1])


def test_linear_composition_validation():
    with pytest.raises(ValueError, match="weights must be finite"):
        LinearComposition([1.0, np.nan])
    comp = LinearComposition(lambda X: np.ones((X.shape[0], 3)), n_components=2)
    with pytest.raises(ValueError, match=r"weights\(X\) must return shape \(4, 2\)"):
        comp.weights(np.zeros((4, 1)))
    with pytest.raises(ValueError, match="n_components is required"):
        LinearComposition(lambda X: X)


def _comp(X):
    return np.c_[X[:, 0], X[:, 0] ** 2]


@pytest.mark.parametrize(
    "build,match",
    [
        (
            lambda: Problem(Box([[0, 1]]), _comp, 2, weights=[1, 1], component_names=["a", "a"]),
            "component_names must be distinct",
        ),
        (
            lambda: Problem(
                CandidateSet(np.array([[0.0], [0.0], [1.0]])), _comp, 2, weights=[1, 1]
            ),
            "X must hold distinct candidates",
        ),
        (lambda: Box([], []), "at least one dimension"),
        (
            lambda: Problem(Box([[0, 1]]), _comp, 2, weights=[1, 1], noise_sd=[0.1] * 3),
            r"noise_sd must be a number or hold one value per component \(J=2\)",
        ),
        (
            lambda: Problem(
                Box([[0, 1]]), _comp, 2, g=lambda F: np.where(F[..., 0] > 0.5, np.nan, F[..., 0])
            ),
            "g.* must be finite",
        ),
    ],
)
def test_problems_that_would_mislead_are_refused_when_built(build, match):
    with pytest.raises(ValueError, match=match):
        build()


@pytest.mark.parametrize(
    "kw,error,match",
    [
        (dict(n_init=50), ValueError, "n_init=50 exceeds the 20 candidates"),
        (dict(n_init=1), ValueError, "n_init must be >= 2"),
        (
            dict(inference="nuts", nuts_kwargs={"draw": 10}),
            TypeError,
            r"nuts_kwargs has unknown key\(s\) \['draw'\]",
        ),
    ],
)
def test_settings_that_would_fail_late_are_refused_before_any_evaluation(kw, error, match):
    from pp_decomp import Optimizer
    from pp_decomp.models import get_problem

    problem = get_problem("synthetic", seed=0, n_components=2, n_points=20)
    with pytest.raises(error, match=match):
        Optimizer(problem, "d-gpucb", **kw)


@pytest.mark.parametrize(
    "args,message",
    [
        (["bench", "--problems", "synthetic", "--trials", "1", "--workers", "0"], "--workers"),
        # (--resume without a file starts the run: tests/loop/test_nothing_lost.py)
        (["run", "--problem", "synthetic", "--iterations", "3", "--init", "5"], "must exceed"),
    ],
)
def test_cli_refuses_bad_flags_by_name(tmp_path, capsys, args, message):
    from pp_decomp.apps.cli import main

    assert main([*args, "--out", str(tmp_path / "missing.nc")]) == 2
    assert message in capsys.readouterr().err


def test_run_takes_priors_and_refuses_to_resume_with_others(tmp_path, capsys):
    import json

    import xarray as xr

    from pp_decomp.apps.cli import main

    out = tmp_path / "run.nc"
    base = ["run", "--problem", "gp-sample-2d", "--init", "3", "--quiet", "--out", str(out)]
    assert main([*base, "--iterations", "4", "--prior", "ls_family=inverse-gamma"]) == 0
    settings = json.loads(xr.load_dataset(out).attrs["settings"])
    assert settings["priors"]["ls_family"] == "inverse-gamma"
    capsys.readouterr()
    again = [*base, "--iterations", "5", "--resume", "--prior", "ls_family=lognormal"]
    assert main(again) == 2
    err = capsys.readouterr().err
    assert "--prior {'ls_family': 'lognormal'} differs from the run in" in err
    assert "({'ls_family': 'inverse-gamma'})" in err
    assert main([*base, "--iterations", "5", "--overwrite", "--prior", "eta_alpha=-1"]) == 2
    assert "eta_alpha" in capsys.readouterr().err
    assert xr.load_dataset(out).sizes["iteration"] == 4  # the run is untouched


def test_run_takes_a_nodes_own_kernel_and_resumes_only_with_it(tmp_path, capsys):
    import json

    import xarray as xr

    from pp_decomp.apps.cli import main

    out = tmp_path / "run.nc"
    base = ["run", "--problem", "ackley-network", "--strategy", "network-ucb", "--init", "3"]
    base += ["--quiet", "--out", str(out)]
    assert main([*base, "--iterations", "4", "--component-kernel", "sq=Matern52"]) == 0
    settings = json.loads(xr.load_dataset(out).attrs["settings"])
    assert settings["components"]["sq"]["kernel"]["op"] == "Matern52"
    assert settings["kernel"] == "matern32" and "cos" not in settings["components"]
    capsys.readouterr()
    again = [*base, "--iterations", "5", "--resume", "--component-kernel", "sq=se"]
    assert main(again) == 2
    assert "--component-kernel" in capsys.readouterr().err
    twice = ["--component-kernel", "sq=se", "--component-kernel", "sq=rq"]
    assert main([*base, "--iterations", "5", "--overwrite", *twice]) == 2
    assert "names 'sq' twice" in capsys.readouterr().err
    assert xr.load_dataset(out).sizes["iteration"] == 4  # the run is untouched
    assert main([*base, "--iterations", "5", "--resume", "--component-kernel", "sq=matern52"]) == 0
    assert xr.load_dataset(out).sizes["iteration"] == 5


def test_run_takes_an_outcome_transform_and_resumes_only_with_it(tmp_path, capsys):
    import json

    import xarray as xr

    from pp_decomp.apps.cli import main

    out = tmp_path / "run.nc"
    base = ["run", "--problem", "flu", "--init", "4", "--quiet", "--out", str(out)]
    assert main([*base, "--iterations", "5", "--outcome-transform", "log"]) == 0
    settings = json.loads(xr.load_dataset(out).attrs["settings"])
    assert (settings["outcome_transform"], settings["strategy"]) == ("log", "d-gpucb-mc-min")
    capsys.readouterr()
    again = [*base, "--iterations", "6", "--resume", "--outcome-transform", "none"]
    assert main(again) == 2
    assert "--outcome-transform none differs from the run in" in capsys.readouterr().err
    assert (
        main(
            [
                *base[:-1],
                str(tmp_path / "b.nc"),
                "--strategy",
                "d-gpucb",
                "--iterations",
                "5",
                "--outcome-transform",
                "log",
            ]
        )
        == 2
    )
    assert "analytic bound needs a linear g" in capsys.readouterr().err
    assert not (tmp_path / "b.nc").exists()
    assert main([*base, "--iterations", "6", "--resume"]) == 0  # the stored transform
    assert xr.load_dataset(out).sizes["iteration"] == 6


def test_run_help_names_the_kernel_the_default_settings_use(capsys):
    from pp_decomp.apps.cli import main
    from pp_decomp.loop.settings import ModelSettings, RunSettings
    from pp_decomp.models import get_problem

    used = RunSettings.build(get_problem("synthetic", seed=0)).model.kernel
    assert used == ModelSettings().kernel
    for command in ("run", "bench", "calibration"):
        with pytest.raises(SystemExit):
            main([command, "--help"])
        text = " ".join(capsys.readouterr().out.split())  # argparse wraps the help
        assert f"the GPs' kernel (default {used})" in text, command
