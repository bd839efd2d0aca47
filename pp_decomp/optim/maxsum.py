"""Exact maximisation of a sum of low-order factors by max-sum on a junction tree.

Rolland et al. (2018), Alg. 2: the acquisition of an additive model with
overlapping groups is ``Σ_c φ_c(x_c)`` over the factors (cliques) of a
dependency graph. On a discretised domain its exact maximiser is found by

1. triangulating the variables' interaction graph (chordal completion),
2. building a junction tree of the maximal cliques (maximum spanning tree of the
   clique graph weighted by separator size, per connected component),
3. assigning every factor to exactly one clique containing its scope (each
   factor is counted once, Rolland eq. 7),
4. passing max-marginals from the leaves to a root and decoding the argmax
   back down.

Cost: ``O(Σ_cliques Π_{v ∈ C} L_v)``; exact for any graph (non-chordal ones are
triangulated first), exponential only in the largest clique.
"""

from __future__ import annotations

from collections.abc import Mapping

import networkx as nx
import numpy as np


def _clique_tables(factors, cliques, cards):
    tables = [np.zeros([cards[v] for v in c]) for c in cliques]
    for scope, table in factors.items():
        table = np.asarray(table, dtype=float)
        home = next((i for i, c in enumerate(cliques) if set(scope) <= set(c)), None)
        if home is None:  # cannot happen after triangulation; guards misuse
            raise ValueError(f"factor scope {scope} is in no clique")
        c = cliques[home]
        order = sorted(range(len(scope)), key=lambda k: c.index(scope[k]))
        t = np.transpose(table, order)
        shape = [cards[v] if v in scope else 1 for v in c]
        tables[home] = tables[home] + t.reshape(shape)
    return tables


def _triangulated_cliques(G: nx.Graph) -> list[tuple[int, ...]]:
    H, _ = nx.complete_to_chordal_graph(G)
    return [tuple(sorted(c)) for c in nx.chordal_graph_cliques(H)]


def junction_tree_cliques(scopes, n_variables: int) -> list[tuple[int, ...]]:
    """The cliques of the chordal completion that :func:`maximize_factors` works on.

    Message passing costs ``Π_{v ∈ C} L_v`` for the largest of them, so callers
    that choose the factors' scopes (structure learning) can bound it.
    """
    G = nx.Graph()
    G.add_nodes_from(range(n_variables))
    for scope in scopes:
        scope = [int(v) for v in scope]
        G.add_edges_from((a, b) for i, a in enumerate(scope) for b in scope[i + 1 :])
    return _triangulated_cliques(G)


def maximize_factors(
    factors: Mapping[tuple[int, ...], np.ndarray], cards
) -> tuple[np.ndarray, float]:
    """Exact ``argmax_x Σ_f φ_f(x_f)`` over discrete variables.

    Parameters
    ----------
    factors : mapping from a scope (tuple of distinct variable indices) to a table
        of shape ``(cards[v] for v in scope)``. Several factors may share a scope.
    cards : sequence of int
        Number of levels of each variable (variables without factors take level 0).

    Returns
    -------
    assignment : (D,) int array of levels; value : float, the maximum.
    """
    cards = [int(c) for c in cards]
    D = len(cards)
    G = nx.Graph()
    G.add_nodes_from(range(D))
    for scope, table in factors.items():
        if len(set(scope)) != len(scope) or any(not 0 <= v < D for v in scope):
            raise ValueError(f"factor scope {scope} must hold distinct variables in [0, {D})")
        if np.shape(table) != tuple(cards[v] for v in scope):
            raise ValueError(
                f"factor {scope} has shape {np.shape(table)}, expected "
                f"{tuple(cards[v] for v in scope)}"
            )
        G.add_edges_from((a, b) for i, a in enumerate(scope) for b in scope[i + 1 :])
    cliques = _triangulated_cliques(G)
    tables = _clique_tables(factors, cliques, cards)
    tree = _junction_tree(cliques)
    assignment = np.zeros(D, dtype=int)
    total = 0.0
    for component in nx.connected_components(tree):
        total += _max_sum(tree, min(component), cliques, tables, cards, assignment)
    return assignment, total


def _junction_tree(cliques) -> nx.Graph:
    """Maximum spanning tree of the cliques on separator sizes (a forest if disconnected)."""
    CG = nx.Graph()
    CG.add_nodes_from(range(len(cliques)))
    for i in range(len(cliques)):
        for j in range(i + 1, len(cliques)):
            w = len(set(cliques[i]) & set(cliques[j]))
            if w:
                CG.add_edge(i, j, weight=w)
    return nx.maximum_spanning_tree(CG)


def _max_sum(tree, root, cliques, tables, cards, assignment) -> float:
    """Max-marginals passed to ``root`` on one tree of the forest, then decoded
    downwards into ``assignment``; returns the tree's maximum."""
    order = list(nx.dfs_preorder_nodes(tree, root))
    parent = {root: None}
    for u, v in nx.dfs_edges(tree, root):
        parent[v] = u
    msgs = {i: tables[i].copy() for i in order}
    argmax = {}
    for i in reversed(order):  # leaves first
        p = parent[i]
        if p is None:
            continue
        ci, cp = cliques[i], cliques[p]
        sep = [v for v in ci if v in cp]
        rest = [v for v in ci if v not in cp]
        t = np.transpose(msgs[i], [ci.index(v) for v in sep + rest])
        flat = t.reshape(int(np.prod([cards[v] for v in sep])), -1)
        best = flat.max(1)
        argmax[i] = (sep, rest, flat.argmax(1))
        shape = [cards[v] if v in sep else 1 for v in cp]
        msgs[p] = msgs[p] + best.reshape([cards[v] for v in sep]).reshape(shape)
    k = int(np.argmax(msgs[root]))
    for v, level in zip(cliques[root], np.unravel_index(k, msgs[root].shape), strict=True):
        assignment[v] = level
    for i in order[1:]:  # decode downwards: parents are set before children
        sep, rest, arg = argmax[i]
        idx = (
            np.ravel_multi_index([assignment[v] for v in sep], [cards[v] for v in sep])
            if sep
            else 0
        )
        levels = np.unravel_index(int(arg[idx]), [cards[v] for v in rest]) if rest else ()
        for v, level in zip(rest, levels, strict=True):
            assignment[v] = level
    return float(msgs[root].ravel()[k])
