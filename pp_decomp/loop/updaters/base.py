"""The updater protocol and what every updater reads: the loop's data as the GPs see it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np

from pp_decomp.components.gp.builtin_form import family_expression
from pp_decomp.kernels import Warped
from pp_decomp.loop.component_models import loop_arguments
from pp_decomp.loop.records import FitNotes
from pp_decomp.loop.setup import RunSetup
from pp_decomp.loop.state import LoopState
from pp_decomp.problem import forward


@dataclass(frozen=True)
class LoopData:
    """The observations so far and the outputs each surrogate model regresses.

    ``X (n, d)``, ``Y (n, J)`` (under the outcome transform; a network's in the
    system's units, as its children read them); ``targets`` maps a model name to its
    outputs ``(n,)``: each component's ``y_j`` under its transform, or ``"composed"``
    / ``"additive"`` to the signed objective ``sign · g(y; x)`` (both for a strategy
    ``with_composed``).
    ``rows_X (r, d)``, ``rows_Y (r, J)``, ``rows_given (r, J)``: a network's rows
    evaluated in part and still open (:mod:`pp_decomp.loop.node_log`), NaN where
    not known, ``given`` where a value is a parent's given by the user; ``n_told``:
    its evaluations told whole and its node evaluations.
    """

    X: np.ndarray
    Y: np.ndarray
    targets: dict
    rows_X: np.ndarray | None = None
    rows_Y: np.ndarray | None = None
    rows_given: np.ndarray | None = None
    n_told: int | None = None

    @property
    def n(self) -> int:
        return self.X.shape[0]

    @property
    def told(self) -> int:
        """Results told so far, what refits count: ``n_told`` (a network's evaluations
        told whole and its node evaluations), else the evaluations."""
        return self.n if self.n_told is None else self.n_told


def loop_data(setup: RunSetup, state: LoopState) -> LoopData:
    """The run's observations as its models regress them: the components under
    the outcome transform, or the signed objective for a composed or additive GP."""
    problem, strategy = setup.problem, setup.strategy
    Y = forward(setup.settings.model.outcome_transform, state.Y)
    if strategy.surrogate in ("decomposed", "network"):
        targets = {name: Y[:, j] for j, name in enumerate(problem.component_names)}
        if strategy.with_composed:
            targets["composed"] = problem.signed_objective(state.Y, state.X)
    else:
        targets = {strategy.surrogate: problem.signed_objective(state.Y, state.X)}
    if strategy.surrogate != "network":
        return LoopData(state.X, Y, targets)
    log = state.nodes
    rows = log.open_rows()
    told = sum(not r.get("by_node", False) for r in state.records) + len(log)
    # the parents a child reads, in the system's units (the node's target alone transformed)
    return LoopData(state.X, state.Y, targets, log.X[rows], log.Y[rows], log.given[rows], told)


def gp_arguments(settings, problem, name: str, max_draws: int) -> dict:
    """``ComponentGP`` keyword arguments of the loop's GP ``name``, from the run settings
    (and the component's own model, where ``components=`` gave one); a component's
    GP learns the run's ``output_warp``, a GP of the composed output does not."""
    own = dict(settings.model.components).get(name)
    if own is not None:
        return loop_arguments(own, settings.model.priors, problem, name, max_draws)
    kernel = settings.model.kernel
    if settings.model.input_warping:
        kernel = Warped(family_expression(kernel, settings.model.priors, problem.dim))
    warp = settings.model.output_warp
    return dict(
        kernel=kernel,
        input_dim=problem.dim,
        priors=settings.model.priors,
        bounds=problem.domain.bounds,
        name=name,
        max_draws=max_draws,
        **({"warp": warp} if warp is not None and name in problem.component_names else {}),
    )


def warm_start(settings, last) -> dict:
    """``fit`` arguments of a MAP refit under ``settings.inference.warm_start``: one L-BFGS-B
    search from ``last``, the previous fit's draws (as Ax's ``warm_start_refit``
    with BoTorch's single start); nothing when it is off or there is no last fit,
    which then searches from ``restarts`` starts.

    One new observation moves the posterior mode little, so the search from the
    last mode converges in a few iterations where the default's three starts
    search afresh each step; a start drawn from the prior is what it gives up.
    """
    if not settings.inference.warm_start or last is None:
        return {}
    return {"init": last, "restarts": 1}


class Updater(Protocol):
    """What the loop asks of a model updater."""

    def update(self, data: LoopData, t: int, rng: np.random.Generator, notes: FitNotes) -> dict:
        """The fitted GPs of step ``t`` by name; what the fit did goes into ``notes``
        (:class:`~pp_decomp.loop.records.FitNotes`: refit summaries, reweighting)."""

    def state(self) -> dict:
        """JSON-serialisable state kept between steps (for checkpoints)."""

    def restore(self, state: dict, data: LoopData) -> None:
        """Rebuild from :meth:`state` and the data it was saved with."""
