"""Function-network problems (Astudillo & Frazier 2021, code ``RaulAstudillo06/BOFN``).

Each is a :func:`~pp_decomp.network.network_problem`: every evaluation returns
all node outputs, the objective is the last node's (or, for the epidemic, a
known function of all of them), and the optimum is known. The inputs live on
``[0, 1]^d`` as in BOFN, which rescales them inside the functions.
"""

from __future__ import annotations

import numpy as np
from scipy import optimize

from pp_decomp.network import Network, Node, network_problem
from pp_decomp.problem import Problem
from pp_decomp.space import Box


def _ackley_sum(Z: np.ndarray) -> np.ndarray:
    return np.mean((4 * Z - 2) ** 2, axis=1)


def _ackley_cos(Z: np.ndarray) -> np.ndarray:
    return np.mean(np.cos(2 * np.pi * (4 * Z - 2)), axis=1)


def _ackley_top(Z: np.ndarray) -> np.ndarray:
    a, b = 20.0, 0.2
    return a * np.exp(-b * np.sqrt(np.maximum(Z[:, 0], 0.0))) + np.exp(Z[:, 1]) - a - np.e


def ackley_network(seed: int = 0, noise_sd: float = 0.0) -> Problem:
    """The negated Ackley function in 6-D as a 3-node network (BOFN's
    ``experiments/ackley.py``): with ``z = 4x - 2``, node ``sq = mean z_i²`` and node
    ``cos = mean cos(2π z_i)`` read every input; node ``ackley = 20 exp(-0.2 √sq) +
    exp(cos) - 20 - e`` reads only them. Maximum 0 at ``x = 0.5`` in every input."""
    d = 6
    net = Network(
        [
            Node("sq", _ackley_sum, inputs=tuple(range(d))),
            Node("cos", _ackley_cos, inputs=tuple(range(d))),
            Node("ackley", _ackley_top, parents=("sq", "cos")),
        ],
        dim=d,
    )
    return network_problem(
        net,
        Box(np.zeros(d), np.ones(d)),
        noise_sd=noise_sd,
        optimum=0.0,
        name="ackley-network",
        description="negated Ackley 6-D as a 3-node network (Astudillo & Frazier 2021)",
        metadata={"seed": seed, "source": "BOFN experiments/ackley.py (Astudillo & Frazier 2021)"},
    )


def _alpine(z: np.ndarray) -> np.ndarray:
    return np.sqrt(z) * np.sin(z)


def alpine2_network(seed: int = 0, n_nodes: int = 6, noise_sd: float = 0.0) -> Problem:
    """The Alpine2 function as a chain (BOFN's ``experiments/alpine2.py``): with
    ``z = 10x`` and ``a(z) = √z sin z``, node 0 is ``a(z_0)`` and node ``k`` is
    ``a(z_k) · y_{k-1}``, reading input ``k`` and node ``k - 1``. The objective is the
    last node; its maximum is ``a(7.917)^K`` at ``x_k = 0.7917`` for all ``k``."""
    nodes = [Node("y0", lambda Z: _alpine(10 * Z[:, 0]), inputs=(0,))]
    for k in range(1, n_nodes):
        nodes.append(
            Node(
                f"y{k}",
                lambda Z: _alpine(10 * Z[:, 0]) * Z[:, 1],
                inputs=(k,),
                parents=(f"y{k - 1}",),
            )
        )
    peak = -optimize.minimize_scalar(
        lambda z: -_alpine(z), bounds=(6, 9), method="bounded", options={"xatol": 1e-10}
    ).fun
    return network_problem(
        Network(nodes, dim=n_nodes),
        Box(np.zeros(n_nodes), np.ones(n_nodes)),
        noise_sd=noise_sd,
        optimum=float(peak**n_nodes),
        name="alpine2-network",
        description=f"Alpine2 as a {n_nodes}-node chain (Astudillo & Frazier 2021)",
        metadata={"seed": seed, "source": "BOFN experiments/alpine2.py (Astudillo & Frazier 2021)"},
    )


EPIDEMIC_BETA = np.array(
    [[[0.30, 0.05], [0.10, 0.7]], [[0.60, 0.05], [0.10, 0.8]], [[0.20, 0.05], [0.10, 0.2]]]
)
EPIDEMIC_GAMMA = 0.5
EPIDEMIC_START = np.array([0.01, 0.01])


def _si_node(group: int, start: np.ndarray | None):
    """Node: 100 × group ``group``'s infected fraction after one period, from
    ``Z = (β_t row-major (4), γ, the previous period's two nodes)``."""

    def node(Z: np.ndarray) -> np.ndarray:
        beta, gamma = Z[:, :4].reshape(-1, 2, 2), Z[:, 4]
        state = np.broadcast_to(start, (len(Z), 2)) if start is not None else Z[:, 5:7] / 100
        s = state[:, group]
        return 100 * (s * (1 - gamma) + (1 - s) * np.einsum("nj,nj->n", beta[:, group], state))

    return node


def _epidemic_nodes() -> list[Node]:
    nodes = []
    for t in range(3):
        inputs = (*range(4 * t, 4 * t + 4), 12)
        parents = () if t == 0 else (f"i0_t{t - 1}", f"i1_t{t - 1}")
        for g in range(2):
            start = EPIDEMIC_START if t == 0 else None
            nodes.append(Node(f"i{g}_t{t}", _si_node(g, start), parents=parents, inputs=inputs))
    return nodes


def epidemic_network(seed: int = 0, noise_sd: float = 0.0) -> Problem:
    """Calibration of a two-group SI epidemic over 3 periods (BOFN's
    ``epidemic_model_calibration_runner.py``): 13 inputs in ``[0, 1]`` (each period's
    2×2 contact rates β_t and the recovery rate γ); node ``i{g}_t{t}`` is 100 × group
    ``g``'s infected fraction after period ``t``, reading ``β_t``, ``γ`` and the
    previous period's two nodes. The objective is minus the squared error of the six
    nodes against those of the true parameters; its maximum is 0 there."""
    nodes = _epidemic_nodes()
    x_true = np.r_[EPIDEMIC_BETA.ravel(), EPIDEMIC_GAMMA][None]
    y_true = Network(nodes, dim=13, objective=np.sum).simulate(x_true)[0]
    net = Network(
        nodes,
        dim=13,
        objective=lambda F: -np.sum((F - y_true) ** 2, axis=-1),
        objective_grad=lambda F: -2.0 * (F - y_true),
    )
    return network_problem(
        net,
        Box(np.zeros(13), np.ones(13)),
        noise_sd=noise_sd,
        optimum=0.0,
        name="epidemic-network",
        description="two-group SI epidemic calibration, 6 nodes (Astudillo & Frazier 2021)",
        metadata={
            "seed": seed,
            "x_true": x_true[0].tolist(),
            "source": "BOFN experiments/epidemic_model_calibration_runner.py and "
            "si_epidemic_model_simulator.py (Astudillo & Frazier 2021)",
        },
    )
