"""Partial evaluations of a function network: which node to evaluate next, and where.

An input whose nodes are evaluated one at a time is a *row in progress*: the
values known so far ``y (K,)``, NaN for the rest. A node can be evaluated in a
row once its parents' values are known there, in the graph's order, as in
Buathong et al. (2024), where a downstream node takes the outputs its parents
gave. The objective is known once every node is.

The choice is expected improvement per unit cost. With ``h*`` the best signed
objective observed and ``EI(x | y_known)`` the expected improvement through
the network with the known nodes held at their values (the others sampled at
them, :meth:`~pp_decomp.network.NetworkSurrogate.samples` with ``fixed``),

* continuing row ``r`` is worth ``EI(x_r | y_r) / c_r``, with ``c_r`` the cost of
  the nodes still unknown there;
* starting the strategy's new input ``x*`` is worth ``EI(x*) / c``, ``c`` every
  node's cost;

and the largest is taken (a new input on ties); the node evaluated is the first
evaluable one in the graph's order. A row whose first nodes came out badly
loses its expected improvement and is left, having cost only those nodes: the
saving partial evaluations buy.

Example
-------
>>> import numpy as np
>>> from pp_decomp.network import Network, Node
>>> net = Network([Node("a", None, inputs=(0,), cost=1.0),
...                Node("b", None, inputs=(0,), parents=("a",), cost=3.0)], dim=1)
>>> next_node(net, np.array([True, False])), remaining_cost(net, np.array([True, False]))
(1, 3.0)
>>> node_choice(net, ei_new=0.4, ei_rows=np.array([0.75]), known=np.array([[True, False]]))
NodeChoice(row=0, node=1, ei_per_cost=0.25, ei_per_cost_new=0.1)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pp_decomp.network.graph import Network


def next_node(network: Network, known: np.ndarray) -> int | None:
    """The first node in the graph's order not ``known`` (K,) whose parents all are;
    ``None`` when every node is known."""
    for k in network.order:
        if not known[k] and all(known[p] for p in network.parents[k]):
            return k
    return None


def remaining_cost(network: Network, known: np.ndarray) -> float:
    """The cost of the nodes not ``known`` (K,): what the row's objective still costs."""
    return float(sum(node.cost for node, kn in zip(network.nodes, known, strict=True) if not kn))


@dataclass(frozen=True)
class NodeChoice:
    """Which node to evaluate: in row ``row`` (``None``: the new input), node ``node``
    (its index), and the expected improvements per unit cost compared."""

    row: int | None
    node: int
    ei_per_cost: float
    ei_per_cost_new: float


def node_choice(
    network: Network, ei_new: float, ei_rows: np.ndarray, known: np.ndarray
) -> NodeChoice:
    """The module docstring's choice between the new input (expected improvement
    ``ei_new``) and the rows in progress (``ei_rows (r,)`` given their ``known (r, K)``
    nodes; rows with no evaluable node are skipped)."""
    total = remaining_cost(network, np.zeros(len(network), dtype=bool))
    new = NodeChoice(None, network.order[0], ei_new / total, ei_new / total)
    best = new
    for r, (ei, kn) in enumerate(zip(np.asarray(ei_rows, dtype=float), known, strict=True)):
        k = next_node(network, kn)
        if k is None:
            continue
        ratio = float(ei) / remaining_cost(network, kn)
        if ratio > best.ei_per_cost:
            best = NodeChoice(r, k, ratio, new.ei_per_cost_new)
    return best
