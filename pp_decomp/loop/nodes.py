"""Partial evaluations in the loop: ``Optimizer.ask_node``, ``tell_node`` and ``run_nodes``.

A network whose nodes can be evaluated one at a time is run node by node. Each
``ask_node`` names one node, the input and the parent values to evaluate it at
(:class:`NodeAsk`); ``tell_node`` records its value. The initial design's inputs
are evaluated to the end first. After it, the node GPs are refitted on every
value known (the evaluations and the rows still open, :mod:`pp_decomp.loop.node_log`),
the strategy proposes a new input, and expected improvement per unit cost picks
between starting it and going on with a row in progress
(:mod:`pp_decomp.network.partial`). A row all of whose nodes are known becomes
an evaluation of the run, with the step record of the choice that started it.

Node asks number their random streams from :data:`NODE_KEYS` on, one per node
evaluation, so they never repeat an input's, and a resumed run, whose
checkpoint holds the log and the node asked, makes the same choices.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from pp_decomp.loop.ask import ask_one
from pp_decomp.loop.records import NODE_STREAM, NOISE_STREAM, StepRecord, checked_observation
from pp_decomp.loop.setup import RunSetup
from pp_decomp.loop.state import LoopState
from pp_decomp.loop.updaters import Updater
from pp_decomp.network import NetworkEI, NetworkSurrogate, next_node, node_choice, problem_network
from pp_decomp.problem import logged
from pp_decomp.strategies.catalog import NETWORK_PATHS
from pp_decomp.validate import as_float_array, check_X

NODE_KEYS = 10**9  # node asks' keys start here, far from any input's


@dataclass(frozen=True)
class NodeAsk:
    """One node to evaluate: ``node`` (its name) at ``x (d,)``, reading its parents'
    values ``parents`` (name -> value, as evaluated at ``x``), at ``cost``."""

    node: str
    x: np.ndarray
    parents: dict
    cost: float


@dataclass(frozen=True)
class NodeDecision:
    """What :func:`choose_node` decided: node ``node`` in row ``row`` (``None``: a new row
    at ``x`` with step record ``start``), its node ``record``, and the GPs it was chosen
    with (``None``: no model chose)."""

    row: int | None
    node: int
    x: np.ndarray
    start: dict
    record: dict
    models: dict | None = None


def pending_ask(setup: RunSetup, state: LoopState) -> NodeAsk | None:
    """The node asked and not yet told, or ``None``."""
    log, p = state.nodes, state.nodes.pending
    if p is None:
        return None
    net, k, row = problem_network(setup.problem), p["node"], p["row"]
    parents = {net.names[j]: float(log.Y[row, j]) for j in net.parents[k]}
    return NodeAsk(net.names[k], log.X[row].copy(), parents, float(net.nodes[k].cost))


def choose_node(setup: RunSetup, state: LoopState, updater: Updater | None) -> NodeDecision:
    """The next node to evaluate (module docstring); nothing of the run is written here."""
    log, net = state.nodes, problem_network(setup.problem)
    key, start = NODE_KEYS + len(log) + 1, time.perf_counter()
    design = log.open_phase("init")
    if design:  # the design's rows are evaluated to the end first
        row = design[0]
        k = next_node(net, np.isfinite(log.Y[row]))
        return NodeDecision(row, k, log.X[row], log.starts[row], {"phase": "init", "key": key})
    d = ask_one(setup, state, updater, key)
    if d.models is None:
        return NodeDecision(None, net.order[0], d.x, d.record, {"phase": "init", "key": key})
    m = setup.settings.model
    surrogate = NetworkSurrogate.of(
        setup.model_problem, d.models, m.copula, state.n, m.outcome_transform
    )
    best = float(np.max(setup.problem.signed_objective(state.Y, state.X)))
    paths = min(setup.settings.acquisition.mc_samples, NETWORK_PATHS)
    ei = NetworkEI(surrogate, best, paths, state.rng(key, NODE_STREAM))
    rows = log.continuable()
    ei_rows = ei(log.X[rows], log.Y[rows]) if len(rows) else np.empty(0)
    c = node_choice(net, float(ei(d.x[None])[0]), ei_rows, np.isfinite(log.Y[rows]))
    record = {
        "phase": "acquisition",
        "key": key,
        "ei_per_cost": c.ei_per_cost,
        "ei_per_cost_new": c.ei_per_cost_new,
        "ask_seconds": time.perf_counter() - start,
    }
    if c.row is None:
        return NodeDecision(None, c.node, d.x, d.record, record, d.models)
    row = int(rows[c.row])
    return NodeDecision(row, c.node, log.X[row], log.starts[row], record, d.models)


@dataclass(frozen=True)
class NodeTell:
    """A checked ``tell_node``: node ``node`` (index) in ``row`` (``None``: a new row at
    ``x``, with the parent values ``given`` by index), and its ``value``."""

    row: int | None
    node: int
    x: np.ndarray
    value: float
    given: dict


def checked_node_tell(setup: RunSetup, state: LoopState, node, x, value, parents) -> NodeTell:
    """``tell_node``'s arguments checked against the network and the rows in progress,
    each error naming the node; where the row completes, its evaluation is checked
    as ``tell``'s (:func:`~pp_decomp.loop.records.checked_observation`). ``parents``
    equal to the values told at ``x`` (or empty, for a node without parents) are
    those values. Nothing is recorded here."""
    net = problem_network(setup.problem)
    if not isinstance(node, str):
        raise TypeError(f"node must be a node's name (one of {list(net.names)}); got {node!r}")
    k = net.index(node)
    try:
        return _checked(setup, state, net, k, x, value, parents)
    except (TypeError, ValueError) as err:
        if f"node {node!r}" in str(err):
            raise
        raise type(err)(f"node {node!r}: {err}") from None


def _checked(setup: RunSetup, state: LoopState, net, k: int, x, value, parents) -> NodeTell:
    p, node = setup.problem, net.names[k]
    x = check_X(np.atleast_2d(as_float_array(x, "x")), "x", input_dim=p.dim)[0]
    if not p.domain.contains(x[None])[0]:
        raise ValueError(f"x={x.tolist()} is outside the problem's domain; nothing was told")
    v = _one_number(value, "value", f"at x={x.tolist()}")
    if logged(setup.settings.model.outcome_transform, len(net))[k] and not v > 0:
        raise ValueError(  # its GP regresses log y: refused before an open row keeps it
            f"node {node!r} is on the log scale (outcome_transform) and needs a positive "
            f"value; got {v!r} at x={x.tolist()}; nothing was told"
        )
    row = state.nodes.row_at(x)
    y = np.full(len(net), np.nan) if row is None else state.nodes.Y[row].copy()
    given = {} if parents is None else _given(net, k, parents)
    if any(not np.isclose(y[j], g, rtol=0, atol=1e-12) for j, g in given.items()):
        return NodeTell(None, k, x, v, given)
    if np.isfinite(y[k]):
        raise ValueError(
            f"node {node!r} was told at x={x.tolist()} before ({y[k]}); nothing was told"
        )
    unknown = [net.names[j] for j in net.parents[k] if not np.isfinite(y[j])]
    if unknown:
        raise ValueError(
            f"node {node!r} reads {unknown}, whose values at x={x.tolist()} are not known: "
            "tell them first, or pass parents={name: value} for the values it was evaluated at"
        )
    y[k] = v
    if np.isfinite(y).all():
        checked_observation(p, x, y, setup.settings.model.outcome_transform)
    return NodeTell(row, k, x, v, {})


def _one_number(value, name: str, where: str) -> float:
    """``value`` as one finite float, or a ValueError naming ``name``; nothing is told."""
    v = as_float_array(value, name).reshape(-1)
    if v.size != 1 or not np.isfinite(v[0]):
        raise ValueError(
            f"{name} must be one finite number; got {value!r} {where}; nothing was told "
            "(tell_failure(x, reason) records a failed evaluation)"
        )
    return float(v[0])


def _given(net, k: int, parents) -> dict[int, float]:
    """``parents`` (name -> value) as node index -> value, exactly node ``k``'s parents."""
    if not isinstance(parents, dict):
        raise TypeError(f"parents must be a dict name -> value; got {parents!r}")
    want = {net.names[j] for j in net.parents[k]}
    if set(parents) != want:
        raise ValueError(f"it reads parents {sorted(want)}; parents= gave {sorted(parents)}")
    return {
        net.index(name): _one_number(val, f"parents[{name!r}]", "") for name, val in parents.items()
    }


def user_start(state: LoopState) -> dict:
    """The step record of a result told unasked: an evaluation, or a row the user started."""
    return StepRecord("user", gamma_next=state.gamma).as_dict()


def cost_spent(setup: RunSetup, state: LoopState) -> float:
    """The cost of the run so far: each evaluation told whole at every node's cost, each
    node evaluation at its node's."""
    net = problem_network(setup.problem)
    whole = sum(not r.get("by_node", False) for r in state.records)
    return whole * sum(n.cost for n in net.nodes) + state.nodes.spent


def run_node_loop(setup: RunSetup, state: LoopState, ask_node, tell_node, budget: float) -> None:
    """``Optimizer.run_nodes``: ask a node, evaluate it alone at its parents' outputs
    (``Network.evaluate_node``, plus the node's observation noise from the node
    ask's own stream), tell it; until the cost spent reaches ``budget``.

    The noise is of measurement, as in ``Problem.evaluate``: a child reads its parents'
    true outputs. Those are the told values where the parents are observed without
    noise, else the parents' noise-free values recomputed at ``x`` (their ancestors
    evaluated again: simulation only)."""
    net, noise = problem_network(setup.problem), setup.problem.noise_sd
    while cost_spent(setup, state) < budget:
        a = ask_node()
        k = net.index(a.node)
        parents = np.array([[a.parents[net.names[j]] for j in net.parents[k]]])
        if np.any(noise[list(net.parents[k])] > 0):
            parents = net.simulate(a.x[None], upto=k)[:, list(net.parents[k])]
        value = float(net.evaluate_node(a.node, a.x[None], parents)[0])
        rng = state.rng(state.nodes.pending["record"]["key"], NOISE_STREAM)
        tell_node(a.node, a.x, value + noise[k] * rng.standard_normal())
