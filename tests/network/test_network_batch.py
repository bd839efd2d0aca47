"""Batches on a function network: ``ask(q)`` and asynchronous runs with the network
strategies, the pending inputs hallucinated in every node's GP through the graph."""

from __future__ import annotations

import numpy as np
import pytest

import pp_decomp as ppd
from pp_decomp.components.gp.base import believing
from pp_decomp.components.posterior.batched import GPPosterior
from pp_decomp.models.networks import alpine2_network
from pp_decomp.network import NetworkSurrogate


@pytest.fixture(scope="module")
def chain():
    return alpine2_network(n_nodes=3)


def _tell_all(opt, problem, X):
    for x in X:
        opt.tell(x, problem.evaluate(x[None], seed=0)[0])


def _designed(chain, strategy, seed=3, **kw):
    opt = ppd.Optimizer(chain, strategy=strategy, n_init=5, seed=seed, **kw)
    _tell_all(opt, chain, opt.ask(5))
    return opt


def test_a_believing_posterior_is_each_draw_told_its_own_mean(rng):
    from pp_decomp import HyperDraws

    X, Xp, Xq = rng.uniform(size=(9, 2)), rng.uniform(size=(3, 2)), rng.uniform(size=(7, 2))
    y = np.sin(4 * X[:, 0]) + X[:, 1]
    draws = HyperDraws(ls=[[0.3, 0.5], [0.8, 0.2]], eta=[1.0, 0.6], sigma=[0.1, 0.3])
    post = GPPosterior("matern32", X, y, draws, mean_var=0.5)
    believed = post.believing(Xp)
    mean_b, var_b = believed.per_draw(Xq)
    for s in range(2):  # the direct route: draw s refactorised with Xp at its own mean
        own = post.per_draw_of(Xp, [s])[0][0]
        direct = GPPosterior(
            "matern32",
            np.vstack([X, Xp]),
            np.concatenate([y, own]),
            draws.subset([s]),
            mean_var=0.5,
        )
        mean_d, var_d = direct.per_draw(Xq)
        np.testing.assert_allclose(mean_b[s], mean_d[0], rtol=1e-8, atol=1e-10)
        np.testing.assert_allclose(var_b[s], var_d[0], rtol=1e-8, atol=1e-12)
    np.testing.assert_allclose(mean_b, post.per_draw(Xq)[0], rtol=1e-8, atol=1e-10)
    assert np.all(var_b <= post.per_draw(Xq)[1] + 1e-12)
    # the gradients and the paired route see the same rows
    _, var_g, _, _ = believed.per_draw_grad(Xq)
    np.testing.assert_allclose(var_g, var_b, rtol=1e-8, atol=1e-12)
    _, var_p = believed.paired_of(np.stack([Xq, Xq[::-1]]), np.array([1, 0]))
    np.testing.assert_allclose(var_p, [var_b[1], var_b[0, ::-1]], rtol=1e-8, atol=1e-12)
    np.testing.assert_array_equal(post.X, X)  # the original is unchanged
    with pytest.raises(ValueError, match=r"Xp must be \(k, 2\); got \(3, 1\)"):
        post.believing(Xp[:, :1])


def test_a_believing_network_keeps_its_means_and_narrows_at_the_pending(chain):
    opt = _designed(chain, "network-ucb")
    opt.ask()  # fits the node GPs
    net = NetworkSurrogate.of(opt.setup.model_problem, opt.models)
    P, X = chain.domain.sample(2, seed=5), chain.domain.sample(40, seed=6)
    believed = net.believing(P)
    z, idx = net.base_samples(512, np.random.default_rng(0))
    for k in range(len(chain.metadata["network"])):  # every node, at inputs of its own
        Z = net.network.node_inputs(k, X, net.believed(X))
        a, b = net.gps[k].predict(Z), believed.gps[k].predict(Z)
        np.testing.assert_allclose(b[0], a[0], rtol=1e-7, atol=1e-9)
        assert np.all(b[1] <= a[1] + 1e-12)
    before, after = net.objective_samples(P, z, idx), believed.objective_samples(P, z, idx)
    assert np.all(after.std(0) < 0.5 * before.std(0))
    np.testing.assert_allclose(believed.believed(P), net.believed(P), rtol=1e-7)
    assert net.believing(P[:0]) is net


@pytest.mark.parametrize("strategy", ["network-ei", "network-ucb"])
def test_ask_q_on_a_network_returns_q_distinct_inputs_and_keeps_them_pending(chain, strategy):
    opt = _designed(chain, strategy)
    X = opt.ask(3)
    assert X.shape == (3, chain.dim) and len(np.unique(X, axis=0)) == 3
    np.testing.assert_array_equal(opt.ask(3), X)  # asking again returns the same inputs
    _tell_all(opt, chain, X[[1]])  # results arrive in any order
    X2 = opt.ask(3)
    np.testing.assert_array_equal(X2[:2], X[[0, 2]])
    assert not any(np.allclose(X2[2], x) for x in X2[:2])
    assert opt.n == 6 and len(opt.pending) == 3


def test_a_network_batch_is_chosen_with_the_pending_believed_not_only_excluded(chain, monkeypatch):
    believed = _designed(chain, "network-ucb").ask(2)
    monkeypatch.setattr(NetworkSurrogate, "believing", lambda self, P: self)
    excluded = _designed(chain, "network-ucb").ask(2)
    np.testing.assert_array_equal(believed[0], excluded[0])  # nothing pending at the first
    # only excluded, the second lands next to the first; believed, it goes elsewhere
    near = np.linalg.norm(excluded[1] - excluded[0])
    assert np.linalg.norm(believed[1] - believed[0]) > 3 * near


def test_network_ei_raises_its_incumbent_to_the_believed_objective_at_the_pending(chain):
    from pp_decomp.loop.ask import build_context

    opt = _designed(chain, "network-ei")
    opt.ask(2)
    st = opt.state
    ctx = build_context(opt.setup, st, opt.models, st.n + 3, np.random.default_rng(0))
    observed = float(np.max(chain.signed_objective(st.Y, st.X)))
    net = NetworkSurrogate.of(opt.setup.model_problem, opt.models)
    believed = float(np.max(net.believed_objective(st.pending.X)))
    assert ctx.best == max(observed, believed)


def test_a_network_run_with_inputs_pending_resumes_to_the_same_choices(chain, tmp_path):
    kw = dict(strategy="network-ei", n_init=5, seed=8)
    ref = ppd.Optimizer(chain, **kw)
    _tell_all(ref, chain, ref.ask(5))
    first = ref.ask(3)
    _tell_all(ref, chain, first[[2]])
    ref_next = ref.ask(3)
    path = tmp_path / "net.nc"
    opt = ppd.Optimizer(chain, checkpoint=path, **kw)
    _tell_all(opt, chain, opt.ask(5))
    np.testing.assert_array_equal(opt.ask(3), first)
    opt.close()  # the driver stops with three inputs in flight
    resumed = ppd.Optimizer.resume(path, chain)
    np.testing.assert_array_equal(resumed.pending.X, first)
    _tell_all(resumed, chain, first[[2]])
    np.testing.assert_array_equal(resumed.ask(3), ref_next)
    resumed.close()


def test_an_asynchronous_network_run_keeps_two_workers_busy(chain):
    opt = ppd.Optimizer(chain, strategy="network-ucb", n_init=4, seed=1)
    ds = opt.run(8, workers=2)
    assert ds.sizes["iteration"] == 8 and ds.sizes.get("failure", 0) == 0
    assert list(ds["phase"].values[4:]) == ["acquisition"] * 4
    assert len(np.unique(ds["x"].values, axis=0)) == 8


def test_the_believing_gp_leaves_the_fitted_one_alone(chain):
    X = chain.domain.sample(8, seed=0)
    gp = ppd.ComponentGP(bounds=chain.domain.bounds).fit(X, chain.evaluate(X)[:, 0], seed=0)
    var = gp.predict(X)[1]
    b = believing(gp, X[:2])
    assert b.posterior is not gp.posterior and len(b.posterior.X) == 10
    np.testing.assert_array_equal(gp.predict(X)[1], var)
    assert len(gp.posterior.X) == 8
