"""Function networks: nodes whose outputs feed other nodes, one GP per node, and the
objective's posterior sampled through the graph (:mod:`pp_decomp.network.graph`,
:mod:`pp_decomp.network.surrogate`, :mod:`pp_decomp.network.acquisition`)."""

from pp_decomp.network.acquisition import NetworkEI, NetworkUCB
from pp_decomp.network.graph import Network, Node
from pp_decomp.network.problem import network_problem, problem_network
from pp_decomp.network.surrogate import NetworkSurrogate, node_bounds

__all__ = [
    "Network",
    "NetworkEI",
    "NetworkSurrogate",
    "NetworkUCB",
    "Node",
    "network_problem",
    "node_bounds",
    "problem_network",
]
