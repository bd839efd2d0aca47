"""A function-network problem as the loop takes it: a :class:`~pp_decomp.Problem`
whose components are the network's nodes.

Every evaluation returns all K node outputs (each with its own noise), so the
loop's ask/tell, checkpoints, resume, benchmarks and the strategies on the
objective alone (GP-UCB, EI, random) run unchanged; the network strategies
(``network-ei``, ``network-ucb``) read the graph from ``problem.metadata["network"]``
and model each node on its inputs and its parents' outputs.

Example
-------
>>> import numpy as np
>>> from pp_decomp.network import Network, Node, network_problem
>>> from pp_decomp.space import Box
>>> net = Network(
...     [Node("a", lambda Z: np.sin(3 * Z[:, 0]), inputs=(0,)),
...      Node("b", lambda Z: -(Z[:, 0] - 0.5) ** 2 + Z[:, 1], inputs=(1,), parents=("a",))],
...     dim=2,
... )
>>> p = network_problem(net, Box([0, 0], [1, 1]), name="toy")
>>> p.component_names, p.n_components
(['a', 'b'], 2)
"""

from __future__ import annotations

import numpy as np

from pp_decomp.network.graph import Network
from pp_decomp.problem import Problem
from pp_decomp.space import Box, Domain


def network_problem(
    network: Network,
    domain: Domain,
    *,
    noise_sd: np.ndarray | float = 0.0,
    maximize: bool = True,
    optimum: float | None = None,
    name: str = "network",
    description: str = "",
    input_names=None,
    metadata: dict | None = None,
) -> Problem:
    """The :class:`~pp_decomp.Problem` of ``network`` over ``domain``: components are the
    nodes (``network.simulate``; none when a node has no function), ``g`` is the
    network's objective of the node outputs, ``noise_sd`` per node (K,) or one for all.
    """
    if not isinstance(network, Network):
        raise TypeError(f"network must be a pp_decomp.network.Network; got {network!r}")
    if domain.dim != network.dim:
        raise ValueError(f"domain has {domain.dim} input(s) but the network reads {network.dim}")
    if not isinstance(domain, Box):
        raise TypeError(f"domain must be a Box for a network problem; got {type(domain).__name__}")
    simulate = network.simulate if all(n.function for n in network.nodes) else None
    return Problem(
        domain=domain,
        components=simulate,
        n_components=len(network),
        g=network.objective,
        maximize=maximize,
        noise_sd=noise_sd,
        optimum=optimum,
        name=name,
        description=description,
        component_names=list(network.names),
        input_names=input_names,
        metadata={**(metadata or {}), "network": network},
    )


def problem_network(problem: Problem) -> Network:
    """The network of a network problem, or a ValueError naming the problem."""
    net = problem.metadata.get("network")
    if not isinstance(net, Network):
        raise ValueError(
            f"problem {problem.name!r} is not a function network (no Network in "
            "problem.metadata['network']); build it with pp_decomp.network.network_problem"
        )
    return net
