"""A function network: nodes whose outputs feed other nodes (Astudillo & Frazier 2021).

Each node ``k`` is a function of the inputs it reads, ``x[I_k]``, and of its
parents' outputs: ``f_k(x[I_k], f_{P_k})``, observed as ``y_k = f_k + ε_k`` (noise
of measurement: a child computes from its parents' true values, and its GP reads
their observed ones, which for a noisy parent blurs the child's fit). The nodes
form a directed acyclic graph; the objective is a known function of the nodes'
outputs, by default the output of the one node no other node reads (BOFN's
``parent_nodes`` and ``active_input_indices``).

Example
-------
>>> import numpy as np
>>> from pp_decomp.network import Network, Node
>>> net = Network(
...     [Node("a", lambda Z: np.sin(Z[:, 0]), inputs=(0,)),
...      Node("b", lambda Z: Z[:, 0] * Z[:, 1], inputs=(1,), parents=("a",))],
...     dim=2,
... )
>>> net.names, net.simulate(np.array([[0.0, 2.0]])).tolist()
(('a', 'b'), [[0.0, 0.0]])
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Node:
    """One node of a :class:`Network`.

    Parameters
    ----------
    name : str
        Unique within the network.
    function : callable ``Z (n, p) -> (n,)``, optional
        The node's system: ``Z`` holds the inputs it reads, ``x[:, inputs]``, then
        its parents' outputs in ``parents`` order (``p = len(inputs) + len(parents)``).
        Leave it out for a system evaluated outside Python (ask/tell).
    parents : names of the nodes whose outputs this node reads
    inputs : indices of the problem's inputs this node reads
    cost : float
        The cost of evaluating this node alone (partial evaluations), default 1.
    """

    name: str
    function: Callable | None = None
    parents: tuple[str, ...] = ()
    inputs: tuple[int, ...] = ()
    cost: float = 1.0

    @property
    def width(self) -> int:
        """``p``: the number of columns of the node's ``Z``."""
        return len(self.inputs) + len(self.parents)


class Network:
    """A directed acyclic graph of :class:`Node` over ``dim`` inputs, checked on
    construction: names unique, parents present, no cycle, input indices in
    ``[0, dim)``, and every node reading something.

    ``objective``: ``F (..., K) -> (...)`` of the nodes' outputs (in ``nodes``
    order), vectorised over leading axes; default the output of the network's
    one sink (the node no other node reads). ``objective_grad``: ``F (..., K) ->
    (..., K)``, its partial derivatives in the node outputs, which lets the
    acquisitions climb on exact gradients (without it, on finite differences).
    """

    def __init__(
        self,
        nodes: Sequence[Node],
        dim: int,
        objective: Callable | None = None,
        objective_grad: Callable | None = None,
    ):
        self.nodes = tuple(nodes)
        self.dim = int(dim)
        _check_nodes(self.nodes, self.dim)
        self.names = tuple(n.name for n in self.nodes)
        index = {name: k for k, name in enumerate(self.names)}
        self.parents = tuple(tuple(index[p] for p in n.parents) for n in self.nodes)
        self.order = _topological_order(self.names, self.parents)
        self.sinks = tuple(k for k in range(len(self.nodes)) if not self.children(k))
        if objective is None and len(self.sinks) != 1:
            raise ValueError(
                f"objective: the network has {len(self.sinks)} sinks "
                f"{[self.names[k] for k in self.sinks]}; give the objective as a function "
                "of the nodes' outputs"
            )
        for name, f in (("objective", objective), ("objective_grad", objective_grad)):
            if f is not None and not callable(f):
                raise TypeError(f"{name} must be a function of the node outputs; got {f!r}")
        self._objective, self._objective_grad = objective, objective_grad

    def __len__(self) -> int:
        return len(self.nodes)

    def children(self, k: int) -> tuple[int, ...]:
        """The nodes that read node ``k``'s output."""
        return tuple(c for c, ps in enumerate(self.parents) if k in ps)

    @property
    def objective_differentiable(self) -> bool:
        """Whether :meth:`objective_grad` answers: a sink objective, or ``objective_grad`` given."""
        return self._objective is None or self._objective_grad is not None

    def objective_grad(self, F: np.ndarray) -> np.ndarray:
        """The objective's partial derivatives in the node outputs ``F (..., K)``:
        ``(..., K)``; ``NotImplementedError`` for an ``objective`` given without them."""
        F = np.asarray(F, dtype=float)
        if self._objective is None:
            out = np.zeros_like(F)
            out[..., self.sinks[0]] = 1.0
            return out
        if self._objective_grad is None:
            raise NotImplementedError("the network's objective was given without objective_grad")
        return np.asarray(self._objective_grad(F), dtype=float).reshape(F.shape)

    def objective(self, F: np.ndarray) -> np.ndarray:
        """The objective of node outputs ``F (..., K)``: ``(...)``."""
        F = np.asarray(F, dtype=float)
        if self._objective is None:
            return F[..., self.sinks[0]]
        return np.asarray(self._objective(F), dtype=float)

    def node_inputs(self, k: int, X: np.ndarray, F: np.ndarray) -> np.ndarray:
        """``Z`` of node ``k``: ``X[..., inputs]`` then ``F[..., parents]``, for ``X (..., d)``
        and the node outputs ``F (..., K)`` broadcast against it: ``(..., p)``."""
        X, F = np.asarray(X, dtype=float), np.asarray(F, dtype=float)
        cols = X[..., list(self.nodes[k].inputs)]
        par = F[..., list(self.parents[k])]
        shape = np.broadcast_shapes(cols.shape[:-1], par.shape[:-1])
        cols = np.broadcast_to(cols, (*shape, cols.shape[-1]))
        par = np.broadcast_to(par, (*shape, par.shape[-1]))
        return np.concatenate([cols, par], axis=-1)

    def evaluate_node(self, name: str, X: np.ndarray, parent_values: np.ndarray) -> np.ndarray:
        """Node ``name`` alone at inputs ``X (n, d)`` and its parents' outputs
        ``parent_values (n, len(parents))`` (a partial evaluation): ``(n,)``."""
        k = self.index(name)
        node = self.nodes[k]
        X = np.atleast_2d(np.asarray(X, dtype=float))
        V = np.asarray(parent_values, dtype=float).reshape(len(X), len(node.parents))
        return self._call(k, np.concatenate([X[:, list(node.inputs)], V], axis=1))

    def simulate(self, X: np.ndarray, upto: int | None = None) -> np.ndarray:
        """Every node's output at ``X (n, d)``, in topological order: ``(n, K)``; with
        ``upto``, only that node's ancestors are evaluated (NaN elsewhere)."""
        X = np.atleast_2d(np.asarray(X, dtype=float))
        F = np.full((len(X), len(self)), np.nan)
        needed = set(range(len(self))) if upto is None else self.ancestors(upto)
        for k in self.order:
            if k in needed:
                F[:, k] = self._call(k, self.node_inputs(k, X, F))
        return F

    def ancestors(self, k: int) -> set[int]:
        """The nodes whose outputs node ``k`` reads, directly or through others."""
        out, todo = set(), list(self.parents[k])
        while todo:
            j = todo.pop()
            if j not in out:
                out.add(j)
                todo.extend(self.parents[j])
        return out

    def index(self, name: str) -> int:
        """The position of node ``name`` in ``nodes``."""
        if name not in self.names:
            raise ValueError(
                f"node {name!r} is not in the network; its nodes are {list(self.names)}"
            )
        return self.names.index(name)

    def _call(self, k: int, Z: np.ndarray) -> np.ndarray:
        node = self.nodes[k]
        if node.function is None:
            raise ValueError(f"node {node.name!r} has no function: it is evaluated outside Python")
        out = np.asarray(node.function(Z), dtype=float)
        if out.shape != (len(Z),):
            raise ValueError(
                f"node {node.name!r} returned shape {out.shape} for {len(Z)} input(s); "
                f"it must return ({len(Z)},)"
            )
        if not np.all(np.isfinite(out)):
            bad = np.flatnonzero(~np.isfinite(out))[:3].tolist()
            raise ValueError(f"node {node.name!r} returned non-finite values at rows {bad}")
        return out

    def __repr__(self) -> str:
        edges = ", ".join(f"{p}->{n.name}" for n in self.nodes for p in n.parents)
        return f"Network({len(self)} nodes over {self.dim} inputs: {edges or 'no edges'})"


def _check_nodes(nodes: tuple, dim: int) -> None:
    if dim < 1:
        raise ValueError(f"dim must be a positive integer; got {dim}")
    if not nodes:
        raise ValueError("nodes: a network needs at least one node")
    bad = [n for n in nodes if not isinstance(n, Node)]
    if bad:
        raise TypeError(f"nodes must be Node instances; got {bad[0]!r}")
    names = [n.name for n in nodes]
    for node in nodes:
        _check_node_fields(node)
        if not isinstance(node.name, str) or not node.name:
            raise ValueError(f"node names must be non-empty strings; got {node.name!r}")
        if names.count(node.name) > 1:
            raise ValueError(f"node name {node.name!r} is used {names.count(node.name)} times")
        for p in node.parents:
            if p not in names:
                raise ValueError(f"node {node.name!r}: parent {p!r} is not a node of the network")
            if p == node.name:
                raise ValueError(f"node {node.name!r} is its own parent")
        bad = [i for i in node.inputs if not (isinstance(i, int | np.integer) and 0 <= i < dim)]
        if bad:
            raise ValueError(
                f"node {node.name!r}: inputs {bad} are out of range for {dim} input(s) "
                f"(indices 0..{dim - 1})"
            )
        if node.width == 0:
            raise ValueError(f"node {node.name!r} reads no input and no parent")
        if not (np.isfinite(node.cost) and node.cost > 0):
            raise ValueError(f"node {node.name!r}: cost must be positive; got {node.cost}")


def _check_node_fields(node: Node) -> None:
    """``parents`` a tuple of distinct names, ``inputs`` of distinct indices."""
    for field, values in (("parents", node.parents), ("inputs", node.inputs)):
        if isinstance(values, str) or not isinstance(values, tuple | list):
            raise TypeError(
                f"node {node.name!r}: {field} must be a tuple; got {values!r} "
                f"(one parent is written ('a',))"
            )
        repeated = sorted({v for v in values if list(values).count(v) > 1})
        if repeated:
            raise ValueError(f"node {node.name!r}: {field} {repeated} appear more than once")


def _on_cycles(left: dict, names: tuple) -> list[str]:
    """The nodes of ``left`` (node -> parents left) on a cycle or between two: those
    left after dropping, again and again, the ones no other node left reads."""
    left = {k: set(ps) for k, ps in left.items()}
    while True:
        read = set().union(*left.values())
        sinks = [k for k in left if k not in read]
        if not sinks:
            return [names[k] for k in sorted(left)]
        for k in sinks:
            del left[k]


def _topological_order(names: tuple, parents: tuple) -> tuple[int, ...]:
    """Kahn's order; a cycle is refused naming its nodes."""
    left = {k: set(ps) for k, ps in enumerate(parents)}
    order: list[int] = []
    while left:
        ready = sorted(k for k, ps in left.items() if not ps)
        if not ready:
            raise ValueError(f"the network has a cycle through nodes {_on_cycles(left, names)}")
        for k in ready:
            order.append(k)
            del left[k]
        for ps in left.values():
            ps.difference_update(ready)
    return tuple(order)
