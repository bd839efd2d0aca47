import itertools

import networkx as nx
import numpy as np
import pytest

from pp_decomp.optim.maxsum import maximize_factors


def _brute(factors, cards):
    best, arg = -np.inf, None
    for x in itertools.product(*[range(c) for c in cards]):
        v = sum(t[tuple(x[i] for i in s)] for s, t in factors.items())
        if v > best:
            best, arg = v, np.array(x)
    return arg, best


@pytest.mark.parametrize("seed", range(12))
def test_equals_brute_force_on_random_graphs(seed):
    rng = np.random.default_rng(seed)
    D = int(rng.integers(3, 7))
    cards = rng.integers(2, 4, D)
    # random graphs include cycles of length >= 4, i.e. non-chordal ones
    G = nx.gnp_random_graph(D, 0.5, seed=seed)
    factors = {(a, b): rng.standard_normal((cards[a], cards[b])) for a, b in G.edges}
    for v in range(D):
        if rng.uniform() < 0.5:
            factors[(v,)] = rng.standard_normal(cards[v])
    if D >= 3:
        s = tuple(sorted(rng.choice(D, 3, replace=False)))  # a 3-variable factor too
        factors[s] = rng.standard_normal([cards[v] for v in s])
    x, v = maximize_factors(factors, cards)
    xb, vb = _brute(factors, cards)
    assert v == pytest.approx(vb, abs=1e-12)
    assert sum(t[tuple(x[i] for i in s)] for s, t in factors.items()) == pytest.approx(vb)


def test_non_chordal_cycle_and_reversed_scopes():
    rng = np.random.default_rng(3)
    cards = [3, 3, 3, 3, 3]
    factors = {(i, (i + 1) % 5) if i < 4 else (0, 4): rng.standard_normal((3, 3)) for i in range(5)}
    factors[(2, 1)] = rng.standard_normal((3, 3))  # scope order differs from clique order
    x, v = maximize_factors(factors, cards)
    assert v == pytest.approx(_brute(factors, cards)[1])


def test_chain_of_20_variables_with_50_levels():
    # its speed is measured by benchmarks/speed/maxsum_time.py, not here
    rng = np.random.default_rng(0)
    factors = {(i, i + 1): rng.standard_normal((50, 50)) for i in range(19)}
    x, v = maximize_factors(factors, [50] * 20)
    assert sum(t[x[a], x[b]] for (a, b), t in factors.items()) == pytest.approx(v)
    # on a chain, dynamic programming gives the same maximum
    best = np.zeros(50)
    for i in range(19):
        best = (best[:, None] + factors[(i, i + 1)]).max(0)
    assert v == pytest.approx(best.max())


def test_bad_factor_shape():
    with pytest.raises(ValueError, match=r"factor \(0, 1\) has shape"):
        maximize_factors({(0, 1): np.zeros((2, 3))}, [2, 2])
