"""``Optimizer(..., input_warping=True)``: every GP the loop fits takes its kernel on
warped inputs, with the run's priors; the setting is recorded, resumed and refused
where it cannot apply."""

from __future__ import annotations

import json
from dataclasses import asdict

import numpy as np
import pytest
import xarray as xr

import pp_decomp as ppd
from pp_decomp import kernels as K
from pp_decomp.components.gp.builtin_form import builtin_form, family_expression, resolved_priors
from pp_decomp.strategies import UnsupportedSetting


def _problem():
    def components(X):
        return np.column_stack([np.sin(6 * X[:, 0] ** 0.4), X[:, 1] ** 2])

    return ppd.Problem(
        domain=ppd.Box([0, 0], [2, 1]),
        components=components,
        n_components=2,
        weights=[1.0, 1.0],
        name="two",
        noise_sd=0.01,
    )


@pytest.mark.parametrize("ls_family", ["inverse-gamma", "lognormal"])
@pytest.mark.parametrize("kernel", ["matern32", "rq"])
def test_the_family_expression_is_the_built_in_model(kernel, ls_family):
    # the fields the model uses, away from their defaults
    ls = {"ls_scale": 0.7, "ls_loc": 0.2} if ls_family == "lognormal" else {"ls_alpha": 4.0}
    shape = {"alpha_beta": 2.0} if kernel == "rq" else {}
    priors = ppd.Priors(ls_family=ls_family, eta_alpha=5.0, **ls, **shape)
    short, fields = builtin_form(family_expression(kernel, priors, 3), ppd.Priors(), None)
    again, want = asdict(resolved_priors(ppd.Priors(), fields, 3)), asdict(priors)
    assert short == kernel and again.keys() == want.keys()
    for k, v in want.items():
        assert again[k] == (v if isinstance(v, str) else pytest.approx(v, rel=1e-12)), k


def test_a_warped_run_records_its_setting_and_resumes_to_the_same_choices(tmp_path):
    path = tmp_path / "run.nc"
    opt = ppd.Optimizer(_problem(), "d-gpucb", input_warping=True, seed=0, checkpoint=path)
    opt.run(9)
    gp = next(iter(opt.models.values()))
    assert "warp_a" in gp.hyper_names() and isinstance(gp.model_kernel, K.WarpedFamily)
    assert json.loads(xr.load_dataset(path).attrs["settings"])["input_warping"] is True
    again = ppd.Optimizer.resume(path, _problem())
    again.run(11)
    whole = ppd.Optimizer(_problem(), "d-gpucb", input_warping=True, seed=0)
    whole.run(11)
    np.testing.assert_array_equal(again.X, whole.X)


def test_input_warping_is_refused_where_it_cannot_apply():
    problem = _problem()
    with pytest.raises(TypeError, match="input_warping must be True or False; got 'yes'"):
        ppd.Optimizer(problem, input_warping="yes")
    with pytest.raises(ValueError, match="correlated=True fits one coregionalised GP"):
        ppd.Optimizer(problem, "d-gpucb", input_warping=True, correlated=True)
    with pytest.raises(UnsupportedSetting, match="strategy 'add-gp-ucb' models 'additive'"):
        ppd.Optimizer(problem, "add-gp-ucb", input_warping=True)


def test_a_component_with_its_own_model_keeps_it_and_the_others_are_warped():
    problem = _problem()
    with pytest.warns(UserWarning, match=r"components \['f1'\] keep their own models as given"):
        opt = ppd.Optimizer(
            problem, components={"f1": K.Matern12()}, input_warping=True, n_init=2, seed=0
        )
    for _ in range(3):
        x = opt.ask()
        opt.tell(x, problem.evaluate(x[None])[0])
    assert repr(opt.models["f0"].kernel).startswith("Warped(Matern32(")
    assert repr(opt.models["f1"].kernel) == "Matern12()"


def test_the_run_command_warps_the_inputs_and_resumes_with_them(tmp_path, capsys):
    from pp_decomp.apps.cli import main

    out = tmp_path / "run.nc"
    args = ["run", "--problem", "branin", "--strategy", "gp-ucb", "--out", str(out)]
    assert main([*args, "--iterations", "6", "--input-warping"]) == 0
    assert json.loads(xr.load_dataset(out).attrs["settings"])["input_warping"] is True
    assert main([*args, "--iterations", "7", "--resume"]) == 0  # the stored setting carries on
    resumed = xr.load_dataset(out)
    assert resumed.sizes["iteration"] == 7
    assert json.loads(resumed.attrs["settings"])["input_warping"] is True
