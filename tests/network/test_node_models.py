"""A network node's own model (``components=`` on a network strategy): a kernel
expression with its priors, or a user's PyMC model, on the node's inputs and its
parents' outputs; recorded, resumed to the same choices, and refused by node
before any evaluation where a node's GP cannot take it."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pymc as pm
import pytest

import pp_decomp as ppd
from pp_decomp import Prior
from pp_decomp import kernels as K
from pp_decomp.models.networks import alpine2_network
from pp_decomp.network import Network, Node, network_problem


@pytest.fixture(scope="module")
def chain():
    return alpine2_network(n_nodes=3)  # y0 -> y1 -> y2, each node reads one input


def tempered(X, y, input_dim):
    """A model of my own for a node: a Matérn 5/2 with inverse-gamma lengthscales
    plus a small linear trend in every input, Student-t-like noise prior."""
    with pm.Model() as model:
        ls = pm.InverseGamma("ls", alpha=3, beta=0.6, shape=input_dim)
        eta = pm.Gamma("eta", alpha=2, beta=2)
        trend = pm.HalfNormal("trend", 0.3)
        cov = eta**2 * pm.gp.cov.Matern52(input_dim, ls=ls) + trend**2 * pm.gp.cov.Linear(
            input_dim, c=0.5
        )
        gp = pm.gp.Marginal(cov_func=cov)
        gp.marginal_likelihood("y", X=X, y=y, sigma=pm.HalfNormal("sigma", 0.3))
    return model, gp


def straight_and_resumed(problem, kw: dict, path, stop: int, n: int):
    """A run of ``n`` evaluations straight, and one checkpointed at ``path`` to ``stop``,
    reopened and run on to ``n``; asserts both made the same choices and returns
    ``(straight results, resumed optimiser, its results)``."""
    straight = ppd.Optimizer(problem, **kw).run(n)
    ppd.Optimizer.open(path, problem, **kw).run(stop)
    resumed = ppd.Optimizer.open(path, problem, **kw)
    ds = resumed.run(n)
    np.testing.assert_array_equal(ds["x"].values, straight["x"].values)
    return straight, resumed, ds


def test_a_node_takes_its_own_kernel_and_priors_and_resumes_to_the_same_choices(chain, tmp_path):
    own = {"y1": K.Matern12(ls=Prior("InverseGamma", alpha=3, beta=0.6)) + K.Linear()}
    kw = dict(strategy="network-ei", n_init=5, seed=2, refit_every=2, components=own)
    straight, resumed, ds = straight_and_resumed(chain, kw, tmp_path / "net.nc", 7, 9)
    # the node's GP is the expression on its two columns (x1, y0); the others the run's
    gp = resumed.models["y1"]
    assert gp.input_dim == 2 and "Matern12" in repr(gp.model_kernel)
    assert resumed.models["y2"].kernel == "matern32"
    recorded = json.loads(ds.attrs["settings"])["components"]["y1"]
    assert recorded["kernel"]["op"] == "+"
    # another model for y1 changes the choices (the model is used, not only recorded)
    other = ppd.Optimizer(chain, **{**kw, "components": {"y1": K.ExpQuad()}}).run(9)
    assert not np.array_equal(other["x"].values, straight["x"].values)


def test_a_users_pymc_model_as_a_node_is_built_on_the_nodes_inputs(chain, tmp_path):
    mine = {"y2": ppd.ComponentGP.from_pymc(tempered)}
    kw = dict(strategy="network-ucb", n_init=5, seed=1, components=mine)
    straight = ppd.Optimizer(chain, **kw).run(8)
    path = tmp_path / "net.nc"
    ppd.Optimizer.open(path, chain, **kw).run(6)
    with pytest.raises(ValueError, match=r"\['y2'\] have their own PyMC models"):
        ppd.Optimizer.resume(path, chain)
    resumed = ppd.Optimizer.resume(path, chain, components=mine)
    ds = resumed.run(8)
    np.testing.assert_array_equal(ds["x"].values, straight["x"].values)
    gp = resumed.models["y2"]
    assert gp.input_dim == 2 and set(gp.hyper_names()) >= {"ls", "eta", "trend"}
    assert mine["y2"].input_dim is None  # the user's template is left as it was
    recorded = json.loads(ds.attrs["settings"])["components"]["y2"]
    assert recorded["pymc"].endswith("tempered") and "trend ~ HalfNormal" in recorded["model"]
    # the network's posterior samples y2 at y1's sampled values through the user's model
    X = chain.domain.sample(4, seed=0)
    pred = resumed.predict(X, n_samples=128)
    assert pred["component_draws"].shape == (128, 4, 3)
    assert np.all(np.isfinite(pred["objective_draws"].values))


def one_lengthscale(X, y, input_dim):
    """A model of my own whose ``ls`` is one number, on the node's own input only."""
    with pm.Model() as model:
        ls = pm.InverseGamma("ls", alpha=4, beta=1.0)
        eta = pm.HalfNormal("eta", 1.0)
        cov = eta**2 * pm.gp.cov.Matern32(input_dim, ls=ls, active_dims=[0])
        cov += pm.HalfNormal("slope", 0.5) ** 2 * pm.gp.cov.Linear(input_dim, c=0.0)
        gp = pm.gp.Marginal(cov_func=cov)
        gp.marginal_likelihood("y", X=X, y=y, sigma=pm.HalfNormal("sigma", 0.2))
    return model, gp


def test_a_pymc_node_whose_ls_is_one_number_records_no_lengthscale_per_input(chain):
    # its scalar ls made the lengthscales the results keep per input 0-d (a crash)
    mine = {"y1": ppd.ComponentGP.from_pymc(one_lengthscale)}
    ds = ppd.Optimizer(chain, strategy="network-ei", n_init=5, seed=0, components=mine).run(7)
    assert np.isnan(ds["ls_mean"].sel(model="y1").values[5:]).all()
    assert np.isfinite(ds["ls_mean"].sel(model="y0").values[5:, 0]).all()


def counting_network():
    calls = []

    def first(Z):
        calls.append(len(Z))
        return np.sin(3 * Z[:, 0])

    nodes = [
        Node("a", first, inputs=(0,)),
        Node("b", lambda Z: Z[:, 0] * Z[:, 1] + Z[:, 2], inputs=(1, 2), parents=("a",)),
    ]
    problem = network_problem(Network(nodes, dim=3), ppd.Box([0, 0, 0], [1, 1, 1]))
    calls.clear()  # the problem's own shape check
    return problem, calls


@pytest.mark.parametrize(
    "model, match",
    [
        (K.Matern52(active_dims=[3]), "active_dims"),
        (K.Warped(K.Matern52()), r"components\['b'\]: .*warps the columns of the node's parents"),
        (K.Warped(K.Matern52(active_dims=[1, 2])), r"parents \['a'\] \(columns 2-2"),
    ],
)
def test_a_node_model_its_gp_cannot_take_is_refused_before_any_evaluation(model, match):
    problem, calls = counting_network()
    with pytest.raises(ValueError, match=match):
        ppd.Optimizer(problem, strategy="network-ei", components={"b": model}).run(6)
    assert not calls


def test_a_warp_on_a_node_that_reads_only_its_parents_is_refused_without_a_remedy():
    nodes = [
        Node("a", lambda Z: np.sin(3 * Z[:, 0]), inputs=(0,)),
        Node("c", lambda Z: Z[:, 0] ** 2, parents=("a",)),
    ]
    problem = network_problem(Network(nodes, dim=1), ppd.Box([0], [1]))
    with pytest.raises(ValueError, match="reads no inputs of its own: leave the warp out"):
        ppd.Optimizer(problem, strategy="network-ei", components={"c": K.Warped(K.Matern52())})


def test_a_node_warped_on_its_own_inputs_only_runs(chain):
    own = {"y1": K.Warped(K.Matern52(active_dims=[0])) * K.Matern52(active_dims=[1])}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        opt = ppd.Optimizer(chain, strategy="network-ei", n_init=5, seed=0, components=own)
        ds = opt.run(8)
    assert ds.sizes["iteration"] == 8
    assert any(n.startswith("warp_a") for n in opt.models["y1"].hyper_names())


def test_input_warping_on_a_network_warps_each_nodes_own_inputs_and_resumes(chain, tmp_path):
    kw = dict(strategy="network-ucb", n_init=5, seed=3, input_warping=True)
    straight, resumed, _ = straight_and_resumed(chain, kw, tmp_path / "warp.nc", 7, 9)
    root, child = resumed.models["y0"].model_kernel, resumed.models["y2"].model_kernel
    assert [type(f).__name__ for f in root.leaves()] == ["Warped(Matern32)"]
    # a child: its own input warped, its parent's column unwarped at unit amplitude
    leaves = child.leaves()
    assert [type(f).__name__ for f in leaves] == ["Warped(Matern32)", "Matern32"]
    assert [f.active_dims for f in leaves] == [[0], [1]] and leaves[1].values["eta"] == 1.0
    plain = ppd.Optimizer(chain, **{**kw, "input_warping": False}).run(9)
    assert not np.array_equal(plain["x"].values, straight["x"].values)
    # a node's own model is kept as given, with a warning naming it
    with pytest.warns(UserWarning, match=r"components \['y1'\] keep their own models"):
        opt = ppd.Optimizer(chain, **kw, components={"y1": K.ExpQuad()})
    opt.run(6)
    assert "Warped" not in repr(opt.models["y1"].model_kernel)
    assert "Warped" in repr(opt.models["y2"].model_kernel)


def test_a_network_node_that_reads_only_its_parents_is_not_warped():
    from pp_decomp.components.gp.priors import Priors
    from pp_decomp.loop.updaters.network import warped_node_kernel

    node = Node("c", None, parents=("a", "b"))
    assert warped_node_kernel("matern52", Priors(), node) == "matern52"


def test_components_on_a_strategy_without_component_or_node_gps_is_refused(chain):
    with pytest.raises(ValueError, match="node GPs of a network strategy"):
        ppd.Optimizer(chain, strategy="gp-ucb", components={"y1": "matern52"})


@pytest.mark.slow
def test_a_full_bayes_network_run_with_a_users_pymc_node_resumes_to_the_same_choices(
    chain, tmp_path
):
    mine = {"y1": ppd.ComponentGP.from_pymc(tempered)}
    kw = dict(
        strategy="network-ei", inference="nuts", n_init=5, seed=0, components=mine,
        nuts_kwargs={"draws": 100, "tune": 100, "chains": 2},
    )  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _, resumed, ds = straight_and_resumed(chain, kw, tmp_path / "net.nc", 6, 8)
    assert resumed.models["y1"].n_draws > 1
    fits = set(ds["fit_draws"].sel(model="y1").values[5:])
    assert fits <= {"chains", "reweighted chains", "posterior importance"}
