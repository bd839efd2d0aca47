"""nutpie sampling the compiled density: the trace's layout, the data swap, and
the same posterior as nutpie sampling the PyMC model."""

from __future__ import annotations

import numpy as np
import pytest

from pp_decomp.components.gp.priors import Priors
from pp_decomp.components.gp.pymc_model import build_model, compiled_model
from pp_decomp.components.inference.native import NutsModel


def _data(n=15, d=2, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, d))
    y = np.sin(5 * X[:, 0]) + 0.1 * rng.standard_normal(n)
    return X, (y - y.mean()) / y.std()


def _sample(model, X, y, draws=100, chains=2, seed=1):
    import nutpie

    model = model.with_data(X=X, y=y)
    if isinstance(model, NutsModel):
        model = model.build(chain_draws=200 + draws)
    return nutpie.sample(
        model,
        draws=draws,
        tune=200,
        chains=chains,
        cores=min(chains, 2),
        seed=seed,
        progress_bar=False,
    )


def test_the_trace_holds_each_parameter_on_both_scales():
    X, y = _data()
    trace = _sample(compiled_model("rq", 2, Priors()).nutpie_model, X, y)
    post = trace.posterior
    assert post["ls"].shape == (2, 100, 2) and post["alpha"].shape == (2, 100)
    for name in ("ls", "eta", "sigma", "alpha"):
        np.testing.assert_allclose(post[name].values, np.exp(post[f"{name}_log__"].values))


def test_with_data_names_what_it_cannot_take():
    model = compiled_model("se", 2, Priors()).nutpie_model
    X, y = _data()
    with pytest.raises(KeyError, match="'Z'"):
        model.with_data(Z=X)
    with pytest.raises(ValueError, match=r"\(15, 2\) and \(14,\)"):
        model.with_data(X=X, y=y[:-1])
    swapped = model.with_data(X=X, y=y)
    assert swapped.shared_data["X"].shape == (15, 2) and model.shared_data["X"].shape == (3, 2)


def test_the_chains_give_back_the_thread_states_they_hold(monkeypatch):
    """Each chain's thread keeps its Python thread state from its first draw to
    its last (``chain_draws``), then gives it back: none is left behind."""
    from pp_decomp.components.inference import native

    made = []

    class Recorded(native._ChainExpand):
        def __init__(self, *args):
            super().__init__(*args)
            made.append(self)

    monkeypatch.setattr(native, "_ChainExpand", Recorded)
    X, y = _data()
    for chains in (1, 4):
        trace = _sample(compiled_model("se", 2, Priors()).nutpie_model, X, y, 50, chains)
        assert trace.posterior["ls"].shape == (chains, 50, 2)
    ran = [c for c in made if c.done]  # nutpie may make an expand it never calls
    assert len(ran) == 5
    for chain in ran:  # every draw expanded, the hold taken and given back
        assert chain.done == chain.draws and chain.held is None
    assert all(c.held is None for c in made)


@pytest.mark.slow
def test_the_posterior_is_the_one_nutpie_samples_from_the_pymc_model():
    import nutpie

    X, y = _data(n=20, d=1, seed=3)
    priors = Priors()
    reference = nutpie.compile_pymc_model(build_model("se", 1, priors), backend="numba")
    ours = _sample(compiled_model("se", 1, priors).nutpie_model, X, y, 1000, 4)
    theirs = _sample(reference, X, y, 1000, 4, seed=2)
    import arviz_stats

    for name in ("ls", "eta", "sigma"):  # nutpie stores a PyMC model's constrained values
        a, b = ours.posterior[name].values.ravel(), theirs.posterior[name].values.ravel()
        se = np.hypot(
            float(arviz_stats.mcse(ours, var_names=[name])[name].max()),
            float(arviz_stats.mcse(theirs, var_names=[name])[name].max()),
        )
        assert abs(a.mean() - b.mean()) < 4 * se, (name, a.mean(), b.mean(), se)
        assert a.std() == pytest.approx(b.std(), rel=0.15), name
