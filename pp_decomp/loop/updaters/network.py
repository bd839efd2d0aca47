"""The updater of a function network's node GPs: each node's GP regresses its output on
the inputs it reads and its parents' observed outputs (:mod:`pp_decomp.network`)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from pp_decomp.components import ComponentGP
from pp_decomp.components.gp.builtin_form import family_expression
from pp_decomp.components.inference.refresh import refresh_fit
from pp_decomp.kernels import Kernel, Warped
from pp_decomp.loop.records import fit_summary
from pp_decomp.loop.updaters.base import gp_arguments
from pp_decomp.loop.updaters.fast import rescaled
from pp_decomp.loop.updaters.refit import RefitUpdater
from pp_decomp.network import Node, node_bounds, problem_network
from pp_decomp.problem import logged


def warped_node_kernel(kernel: str, priors, node: Node) -> Kernel | str:
    """The run's ``kernel`` on a node's ``Z_k`` under ``input_warping=True``: the family
    on the node's own inputs Kumaraswamy-warped, times the family on its parents'
    columns unwarped with ``η = 1``, each with the lengthscale prior of the node's
    width. A parent's column is scaled by its observed range, which the sampled
    paths leave, and the warp needs the unit box; a node that reads no inputs of
    its own keeps ``kernel``.

    >>> from pp_decomp.components.gp.priors import Priors
    >>> node = Node("b", None, inputs=(0, 2), parents=("a",))
    >>> k = warped_node_kernel("matern32", Priors(), node)
    >>> [type(f).__name__ for f in k.leaves()], [f.active_dims for f in k.leaves()]
    (['Warped(Matern32)', 'Matern32'], [[0, 1], [2]])
    """
    own, width = len(node.inputs), node.width
    if not own:
        return kernel
    if own == width:
        return Warped(family_expression(kernel, priors, width))
    warped = Warped(family_expression(kernel, priors, width, list(range(own))))
    return warped * family_expression(kernel, priors, width, list(range(own, width)), True)


class NetworkUpdater(RefitUpdater):
    """MAP or NUTS refits of every node's GP on ``Z_k = (x[I_k], y_{P_k})``, every
    ``refit_every`` observations (conditioned on the last draws between), with the
    run's kernel and priors (or the node's own model); a parent's columns scaled by
    its observed range at the refit (:func:`~pp_decomp.network.node_bounds`), kept
    until the next refit so that the draws between keep the scale they were fitted on.

    Under NUTS a node's refit first refreshes its last draws by importance sampling
    on the data so far (:func:`~pp_decomp.components.inference.refresh.refresh_fit`,
    the fast path's refresh: its weights' ESS and ``k̂`` checked), on the bounds they
    were fitted on; where the weights fail, or after ``max_refreshes`` refreshes in a
    row (``fast_settings``), it runs NUTS on new bounds."""

    def __init__(self, settings, problem):
        super().__init__(settings, problem)
        self.network = problem_network(problem)
        self.bounds: dict[str, np.ndarray] = {}
        self.refreshes: dict[str, int] = {}  # refreshes in a row since the last NUTS fit
        self.y_std: dict[str, float] = {}  # the outputs' scale of each node's last draws
        self.logged = logged(settings.model.outcome_transform, len(self.network))

    def update(self, data, t, rng, notes):
        if not self.refits(data):
            return super().update(data, t, rng, notes)
        refreshed = self._refreshed(data, rng, notes)
        rest = {name: y for name, y in data.targets.items() if name not in refreshed}
        dom, net = self.problem.domain, self.network
        Y = data.Y if data.rows_Y is None else np.vstack([data.Y, data.rows_Y])
        for name in rest:
            self.bounds[name] = node_bounds(net, net.index(name), dom, Y)
        fitted = super().update(replace(data, targets=rest), t, rng, notes) if rest else {}
        for name, gp in fitted.items():
            self.refreshes[name], self.y_std[name] = 0, float(gp.y_std)
        for name, summary in notes.refit.items():
            summary.update(self._on_inputs(name, summary["ls_mean"]))
        return {n: refreshed[n] if n in refreshed else fitted[n] for n in data.targets}

    def _refreshed(self, data, rng, notes) -> dict:
        """The nodes whose refit is a refresh of their last NUTS draws that passed its
        checks (class docstring), fitted, by name; none under MAP."""
        s, out = self.settings, {}
        if s.inference.method != "nuts":
            return out
        for name in data.targets:
            last = self.draws.get(name)
            if last is None or self.refreshes.get(name, 0) >= s.inference.fast_path.max_refreshes:
                continue
            gp = self._gp(name)  # on the bounds the last draws were fitted on
            X, y = self._training(name, data)
            gp._set_data(X, y)
            init = rescaled(last, self.y_std.get(name, gp.y_std) / gp.y_std, gp)
            if refresh_fit(gp, X, y, init, s.inference.max_draws, rng):
                out[name], self.draws[name] = gp, gp.draws
                self.refreshes[name] = self.refreshes.get(name, 0) + 1
                self.y_std[name] = float(gp.y_std)
                notes.refit[name] = fit_summary(gp)
        return out

    def _on_inputs(self, name: str, ls) -> dict:
        """A node's mean lengthscales as the results file keeps them: ``ls_mean`` on the
        problem's inputs (NaN for those it does not read), ``parent_ls_mean`` by parent."""
        node = self.network.nodes[self.network.index(name)]
        ls = np.asarray(ls, dtype=float)
        on_inputs = np.full(self.problem.dim, np.nan)
        on_inputs[list(node.inputs)] = ls[: len(node.inputs)]
        parents = dict(zip(node.parents, ls[len(node.inputs) :].tolist(), strict=True))
        return {"ls_mean": on_inputs, "parent_ls_mean": parents}

    def _training(self, name: str, data) -> tuple:
        """Node ``name``'s ``Z_k`` and ``y_k`` (on the log scale for a node the outcome
        transform logs) at the evaluations and at the open rows where it is observed
        and its parents' values are known."""
        net, k = self.network, self.network.index(name)
        Z, y = net.node_inputs(k, data.X, data.Y), data.targets[name]
        if data.rows_X is None or not len(data.rows_X):
            return Z, y
        known = np.isfinite(data.rows_Y)
        use = known[:, k] & ~data.rows_given[:, k] & known[:, list(net.parents[k])].all(axis=1)
        rows = net.node_inputs(k, data.rows_X[use], data.rows_Y[use])
        y_rows = data.rows_Y[use, k]
        if self.logged[k]:  # told rows were checked positive
            y_rows = np.log(y_rows)
        return np.vstack([Z, rows]), np.concatenate([y, y_rows])

    def _gp(self, name: str, data=None) -> ComponentGP:
        s, node = self.settings, self.network.nodes[self.network.index(name)]
        args = gp_arguments(s, self.problem, name, s.inference.max_draws)
        args["input_dim"] = node.width
        args["bounds"] = self.bounds.get(name)
        if s.model.input_warping and name not in dict(s.model.components):
            args["kernel"] = warped_node_kernel(s.model.kernel, s.model.priors, node)
        return ComponentGP(**args)

    def state(self) -> dict:
        return {
            **super().state(),
            "bounds": {n: b.tolist() for n, b in self.bounds.items()},
            "refreshes": dict(self.refreshes),
            "y_std": dict(self.y_std),
        }

    def restore(self, state, data) -> None:
        super().restore(state, data)
        self.bounds = {n: np.asarray(b, dtype=float) for n, b in state.get("bounds", {}).items()}
        self.refreshes = {n: int(v) for n, v in state.get("refreshes", {}).items()}
        self.y_std = {n: float(v) for n, v in state.get("y_std", {}).items()}
