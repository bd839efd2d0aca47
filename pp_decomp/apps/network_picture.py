"""``network.png``: a function network drawn with each node's fit (:mod:`pp_decomp.network`).

Nodes are laid out in columns by depth (a node one column right of its deepest
parent), an arrow from each parent to each child. Each node's panel shows its
GP's fit: at every evaluation, the observed output against the GP's posterior
mean at that evaluation's ``Z_k`` (its inputs and its parents' observed
outputs), with a 95% interval (the mean plus and minus 1.96 sd of the mixture; for
a node on the log scale, ``exp`` of its GP's mean and of that interval's ends, in the
node's units); points on the diagonal are fitted, the interval says how sure the GP is. The GPs
are those of the last choice: evaluations told after it (in red) are predicted,
not fitted.

Example
-------
>>> import pp_decomp as ppd, tempfile, pathlib
>>> from pp_decomp.models import get_problem
>>> opt = ppd.Optimizer(get_problem("ackley-network"), strategy="network-ucb", seed=0)
>>> _ = opt.run(16)
>>> path = pathlib.Path(tempfile.mkdtemp()) / "network.png"
>>> plot_network(opt.report_view(), path); path.exists()
True
"""

from __future__ import annotations

import textwrap

import numpy as np

from pp_decomp.apps.figures import FIGURES
from pp_decomp.network import Network, problem_network
from pp_decomp.problem import logged


def depths(net: Network) -> list[int]:
    """Each node's depth: 0 for a node without parents, else one more than its deepest parent."""
    depth = [0] * len(net)
    for k in net.order:
        depth[k] = 1 + max((depth[p] for p in net.parents[k]), default=-1)
    return depth


def _panels(fig, net: Network) -> list:
    """One axes per node, in columns by depth, each column centred."""
    depth = depths(net)
    columns, rows = max(depth) + 1, max(np.bincount(depth))
    h = 0.8 / rows
    axes = [None] * len(net)
    for col in range(columns):
        nodes = [k for k in range(len(net)) if depth[k] == col]
        top = 0.85 - (rows - len(nodes)) * h / 2
        for row, k in enumerate(nodes):
            box = [0.07 + col / columns, top - (row + 1) * h + 0.1 * h, 0.6 / columns, 0.62 * h]
            axes[k] = fig.add_axes(box)
    return axes


def _reads(net: Network, k: int, input_names) -> str:
    node = net.nodes[k]
    inputs = [input_names[i] for i in node.inputs]
    if len(inputs) == net.dim and net.dim > 2:
        inputs = ["every input"]
    return textwrap.shorten("reads " + ", ".join(inputs + list(node.parents)), 48)


def _fit(ax, run, net: Network, k: int) -> None:
    gp = run.models()[net.names[k]]
    Z = net.node_inputs(k, run.X, run.Y)
    mean, var = gp.predict(Z)
    y, sd = run.Y[:, k], np.sqrt(var)
    lo, hi = mean - 1.96 * sd, mean + 1.96 * sd
    if logged(run.outcome_transform, len(net))[k]:
        mean, lo, hi = np.exp(mean), np.exp(lo), np.exp(hi)
    fitted = len(gp.X_train)  # told after the last choice's fit: predicted, not fitted
    for part, style in ((slice(0, fitted), "C0"), (slice(fitted, None), "C3")):
        err = np.stack([mean[part] - lo[part], hi[part] - mean[part]])
        ax.errorbar(y[part], mean[part], yerr=err, fmt="o", ms=3, lw=0.8, color=style)
    lo, hi = min(y.min(), mean.min()), max(y.max(), mean.max())
    ax.plot([lo, hi], [lo, hi], "k--", lw=0.8)
    ax.set_title(f"{net.names[k]}\n{_reads(net, k, run.problem.input_names)}", fontsize=7)
    ax.tick_params(labelsize=6)
    ax.set_xlabel("observed", fontsize=6)
    ax.set_ylabel("posterior mean, 95%", fontsize=6)


def plot_network(run, path) -> None:
    """Draw ``run``'s network with each node's fit into ``path`` (module docstring)."""
    from matplotlib.patches import ConnectionPatch

    plt = FIGURES
    net = problem_network(run.problem)
    columns = max(depths(net)) + 1
    rows = max(np.bincount(depths(net)))
    fig = plt.figure(figsize=(3.4 * columns, 2.6 * rows + 1.0))
    axes = _panels(fig, net)
    for k in range(len(net)):
        _fit(axes[k], run, net, k)
        for p in net.parents[k]:
            arrow = ConnectionPatch(
                (1.0, 0.5), (0.0, 0.5), "axes fraction", "axes fraction",
                axesA=axes[p], axesB=axes[k], arrowstyle="->", color="0.4", lw=1,
            )  # fmt: skip
            fig.add_artist(arrow)
    fig.suptitle(
        f"{run.problem.name}: {run.strategy} ({run.inference}), {run.n} evaluations\n"
        "each node: observed output against its GP's posterior at the same inputs "
        "(red: told after the last fit)",
        fontsize=9,
    )
    fig.savefig(path, dpi=110)
    plt.close(fig)
