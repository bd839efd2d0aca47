"""Function networks: nodes whose outputs feed other nodes, one GP per node, and the
objective's posterior sampled through the graph (:mod:`pp_decomp.network.graph`,
:mod:`pp_decomp.network.surrogate`, :mod:`pp_decomp.network.acquisition`), and which node
to evaluate next where they may be evaluated one at a time (:mod:`pp_decomp.network.partial`)."""

from pp_decomp.network.acquisition import NetworkEI, NetworkUCB
from pp_decomp.network.graph import Network, Node
from pp_decomp.network.partial import NodeChoice, next_node, node_choice, remaining_cost
from pp_decomp.network.problem import network_problem, problem_network
from pp_decomp.network.surrogate import NetworkSurrogate, node_bounds, node_correlation

__all__ = [
    "Network",
    "NetworkEI",
    "NetworkSurrogate",
    "NetworkUCB",
    "Node",
    "NodeChoice",
    "network_problem",
    "next_node",
    "node_choice",
    "node_bounds",
    "node_correlation",
    "problem_network",
    "remaining_cost",
]
