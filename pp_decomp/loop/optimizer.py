"""``Optimizer``: the ask/tell loop.

Every random choice at step ``k`` (evaluations and failures so far, plus one)
draws from ``SeedSequence(seed, spawn_key=(k, stream))``, and the hyperparameter
draws in use are part of the checkpoint, so a run resumed from its file makes
exactly the choices the uninterrupted run makes. The loop itself is thin:
settings are validated by :class:`~pp_decomp.loop.settings.RunSettings`, models
follow the data through an updater (:mod:`pp_decomp.loop.updaters`), strategies
choose (:mod:`pp_decomp.strategies`), failed evaluations are kept by
:mod:`pp_decomp.loop.state` and files are written by :mod:`pp_decomp.loop.checkpoint`.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import xarray as xr

from pp_decomp.apps.report_pictures import RunView, report_of
from pp_decomp.loop import checkpoint as ckpt
from pp_decomp.loop.ask import Decision, decisions
from pp_decomp.loop.checkpoint import attach, check_resume, loop_state, named_as_stored, restore
from pp_decomp.loop.component_models import as_modelled
from pp_decomp.loop.evaluate import ErrorPolicy
from pp_decomp.loop.nodes import (
    NodeAsk,
    checked_node_tell,
    choose_node,
    cost_spent,
    pending_ask,
    run_node_loop,
    user_start,
)
from pp_decomp.loop.posterior import posterior
from pp_decomp.loop.predict import fit_afresh, predict
from pp_decomp.loop.records import DrawLog, checked_observation, warn_if_repeated
from pp_decomp.loop.run import run_loop
from pp_decomp.loop.settings import RunSettings
from pp_decomp.loop.setup import RunSetup, Steps
from pp_decomp.loop.state import LoopState
from pp_decomp.loop.updaters import Updater
from pp_decomp.loop.updaters.factory import make_updater
from pp_decomp.network import problem_network
from pp_decomp.problem import Problem
from pp_decomp.results import build_dataset
from pp_decomp.strategies import get_strategy
from pp_decomp.validate import as_float_array, check_positive, check_positive_int, check_X


def _of(part: str, name: str, doc: str) -> property:
    return property(lambda self: getattr(getattr(self, part), name), doc=doc)


def _of_state(name: str, doc: str) -> property:
    return _of("state", name, doc)


class _Views:
    """The read-only views of a run an :class:`Optimizer` offers: its setup's parts
    and its state's, by their public names."""

    setup: RunSetup
    state: LoopState

    problem = _of("setup", "problem", "The problem (Problem).")
    settings = _of("setup", "settings", "The validated settings (RunSettings).")
    strategy = _of("setup", "strategy", "The strategy (Strategy).")
    model_problem = _of(
        "setup",
        "model_problem",
        "The problem as the GPs see it (Problem): under the outcome transform; a "
        "network strategy's is the problem itself, its surrogate applying each node's.",
    )
    X = _of_state("X", "Inputs told so far: (n, d).")
    Y = _of_state("Y", "Components observed at them: (n, J).")
    records = _of_state("records", "One step record per observation (list of dict).")
    failures = _of_state("failures", "The failed evaluations (FailureLog).")
    pending = _of_state("pending", "Inputs asked and not yet told (Pending).")
    gamma = _of_state("gamma", "GP-MI's information so far (float).")
    n = _of_state("n", "Evaluations told so far (failures not counted).")

    steps = property(
        lambda self: Steps(self.ask, self.tell, self.tell_failure, self.results),
        doc="The run's public steps as a driver of the loop calls them (Steps).",
    )

    def report_view(self) -> RunView:
        """What the report's pictures read of this run
        (:class:`~pp_decomp.apps.report_pictures.RunView`), its observations as they are now."""
        models = lambda: self._current_models("report")  # noqa: E731
        return RunView(
            self.problem, self.settings.strategy, self.strategy.surrogate,
            self.settings.inference.method, self.X, self.Y, self.pending.X,
            models, self.results, self.predict, self.posterior,
            self.settings.model.outcome_transform,
        )  # fmt: skip

    def signed_objective(self) -> np.ndarray:
        """Observed ``sign · g(y; x)`` at every evaluation so far: (n,)."""
        return self.problem.signed_objective(self.Y, self.X)


class _NodeSteps:
    """A function network evaluated one node at a time (:mod:`pp_decomp.loop.nodes`)."""

    setup: RunSetup
    state: LoopState

    def ask_node(self) -> NodeAsk:
        """The next node to evaluate alone: its name, the input ``x (d,)`` and the parent
        values to evaluate it at, and its cost (:class:`~pp_decomp.loop.nodes.NodeAsk`).
        The design's inputs are evaluated to the end first; then expected improvement
        per unit cost picks between a new input and a row in progress. The node stays
        asked until told (repeated calls return it). Needs a network strategy."""
        if self.setup.strategy.surrogate != "network":
            raise ValueError(
                f"ask_node evaluates a function network's nodes one at a time; strategy "
                f"{self.setup.strategy.name!r} does not model the nodes (use network-ei "
                "or network-ucb)"
            )
        asked = pending_ask(self.setup, self.state)
        if asked is not None:
            return asked
        d = choose_node(self.setup, self.state, self.updater)
        if d.models is not None:
            self.models = d.models
            self.draw_log.add(d.record["key"], d.models)
        log = self.state.nodes
        row = log.start(d.x, d.start) if d.row is None else d.row
        log.pending = {"row": row, "node": d.node, "record": d.record}
        self._save()
        return pending_ask(self.setup, self.state)

    def tell_node(self, node: str, x, value: float, *, parents: dict | None = None) -> None:
        """Record node ``node``'s ``value`` evaluated alone at ``x (d,)``; checkpoint.

        Its parents' values are those told at ``x`` before, or ``parents`` (name -> value)
        for values it was evaluated at otherwise (they are its inputs, not data of the
        parents' GPs). Once every node at ``x`` is told, ``x`` is an evaluation of the run.
        Checked before anything is recorded; each error names the node."""
        t = checked_node_tell(self.setup, self.state, node, x, value, parents)
        log, st = self.state.nodes, self.state
        p = log.pending
        asked = p is not None and t.row is not None and (p["row"], p["node"]) == (t.row, t.node)
        if t.row is None:  # an input asked by ask() and told node by node keeps its record
            start = None if t.given else st.pending.take(t.x)
            t = replace(t, row=log.start(t.x, start or user_start(st), t.given))
        row = t.row
        cost = problem_network(self.setup.problem).nodes[t.node].cost
        log.observe(row, t.node, t.value, cost, p["record"] if asked else {"phase": "user"})
        if asked:
            log.pending = None
        if log.complete(row):
            if log.starts[row]["phase"] == "user":
                warn_if_repeated(st.X, t.x, False)
            st.add(t.x, log.Y[row].copy(), {**log.starts[row], "by_node": True})
            log.became[row] = st.n
        self._save()

    def run_nodes(self, budget: float) -> xr.Dataset:
        """Evaluate node by node (:meth:`ask_node`; the node alone at its parents' told
        values with its observation noise; :meth:`tell_node`) until the cost spent
        (:meth:`cost_spent`) reaches ``budget``; the results."""
        budget = check_positive(budget, "budget")
        run_node_loop(self.setup, self.state, self.ask_node, self.tell_node, budget)
        return self.results()

    def cost_spent(self) -> float:
        """The run's cost so far: each evaluation told whole at the sum of the nodes'
        costs, each node evaluated alone at its own."""
        return cost_spent(self.setup, self.state)


def _as_modelled(problem: Problem, strategy, settings) -> Problem:
    """The problem as the GPs see it: its components under the outcome transform; a
    network strategy's is the problem itself, its surrogate applying each node's
    transform, so that the children read the nodes in the system's units."""
    if strategy.surrogate == "network":
        return problem
    m = settings.model
    return as_modelled(problem, m.outcome_transform, m.components, m.output_warp)


class Optimizer(_Views, _NodeSteps):
    """Bayesian optimisation with decomposed feedback, one evaluation at a time.

    Parameters
    ----------
    problem : Problem
    strategy : str, optional
        A name from :data:`pp_decomp.strategies.STRATEGIES`; default ``network-ucb`` for
        a function network where it can run, ``d-gpucb`` for a linear ``g``, else
        ``d-gpucb-mc-min`` (:func:`~pp_decomp.strategies.default_strategy`).
        One that cannot run on the problem is refused.
    checkpoint : path, optional
        Results file rewritten atomically after every ask and tell (:meth:`run`: ``save_every``),
        the one before kept as ``NAME.prev``, locked against a second writer. An existing file is
        refused (:meth:`resume`, :meth:`open`) unless ``overwrite=True`` (kept as ``.NAME.bak``).
    n_init : int
        Space-filling initial design size (shared by all strategies for a seed), counting
        inputs told unasked (data you bring); at least 2, or 0 with ``inference="fixed"``.
    inference, known_kernels : {"map", "nuts", "fixed"}, KnownKernels
        Hyperparameters by MAP or NUTS at each refit, or ``"fixed"``: GPs conditioned
        on known kernels (``known_kernels``, default ``problem.known_kernels``), as in
        Wang et al.'s experiments.
    refit_every, warm_start : int, bool
        Refit every this many new observations (the last draws conditioned in between);
        MAP refits search once from the last fit's mode (Ax's ``warm_start_refit``).
    kernel, priors, beta, input_warping, output_warp :
        Kernel (default ``"matern32"``), :class:`~pp_decomp.Priors`, schedule ``t -> β_t``;
        the kernel on Kumaraswamy-warped inputs (:func:`~pp_decomp.kernels.Warped`, default off);
        every component GP's learned output warp (``"sinh-arcsinh"``, default ``None``).
    components : list or dict, optional
        Each component's (or network node's) own model: a ComponentGP, a kernel or a
        shorthand, one per component or by name (:mod:`pp_decomp.loop.component_models`).
    seed : int
        Root seed of every random choice.
    nuts_kwargs : dict, optional
        ``NutsSettings`` fields (fast path: only target_accept, low_rank_mass_matrix).
    max_draws, mc_samples, max_retries : int
        Draws kept per GP; posterior-predictive draws of the Monte Carlo acquisitions; how
        many times an input that failed may be asked again (default 0: never).
    acq_method : {"auto", "lbfgs", "direct"}
        Maximiser on continuous boxes.
    fast, fast_settings :
        The full-Bayes fast path (:mod:`pp_decomp.loop.updaters.fast`; needs
        ``inference="nuts"``) and its refit policy.
    additive_settings : AdditiveSettings, optional
        Structure learning and maximisation of the additive strategies.
    correlated, copula : bool
        One GP with correlated outputs (:class:`~pp_decomp.CorrelatedComponents`), or
        independent GPs (or a network's nodes) whose errors a copula correlates (default:
        :func:`~pp_decomp.loop.settings.copula_applies`, off on a network).
    updater : Updater, optional
        Keeps the models up to date (:class:`~pp_decomp.loop.updaters.Updater`; default
        :mod:`pp_decomp.loop.updaters.factory`'s choice); pass it again to :meth:`resume`.
    outcome_transform : {"none", "log"}
        The component GPs regress ``y_j`` or ``log y_j`` (:mod:`pp_decomp.problem`).
    """

    def __init__(
        self,
        problem: Problem,
        strategy: str | None = None,
        *,
        checkpoint=None,
        overwrite=False,
        updater: Updater | None = None,
        **kw,
    ):
        if not isinstance(problem, Problem):
            raise TypeError(f"problem must be a pp_decomp.Problem; got {type(problem).__name__}")
        s = RunSettings.build(problem, strategy, **kw)
        strat = get_strategy(strategy or s.strategy)  # a strategy object is used as given
        self.setup = RunSetup(problem, _as_modelled(problem, strat, s), s, strat)
        self.state = LoopState(
            problem.domain, problem.n_components, s.seed, s.n_init, s.max_retries
        )
        self.updater = make_updater(s, strat, self.setup.model_problem, updater)
        self.models: dict = {}  # the GPs (GPModel) the last model-based choice used, by name
        self.draw_log = DrawLog()  # the draws every model-based choice used
        self.checkpoint, self._file, self._schedule = checkpoint, None, ckpt.SaveSchedule()
        if checkpoint is not None:
            self._file = attach(checkpoint, fresh=True, overwrite=overwrite)

    def ask(self, q: int | None = None) -> np.ndarray:
        """The next input to evaluate, ``(d,)``; with ``q``, the ``q`` inputs to have
        in flight, ``(q, d)``.

        Asked inputs stay pending until told (:meth:`tell`, in any order). Pending
        inputs come first, oldest first; new ones are chosen with the pending ones
        hallucinated (:mod:`pp_decomp.loop.ask`), so repeated calls return the same
        inputs and ``ask(q)`` after a result arrived adds one new input. On a
        candidate set, asking for more new inputs than free candidates is refused.
        """
        k, before = check_positive_int(1 if q is None else q, "q"), len(self.state.pending)
        for decision in decisions(self.setup, self.state, self.updater, k):
            self._take(decision)
        if len(self.state.pending) > before:
            self._save()
        return self.state.pending.X[0].copy() if q is None else self.state.pending.X[:k].copy()

    def _take(self, d: Decision) -> None:
        """Make a chosen input pending; the GPs it was chosen with become current."""
        if d.models is not None:
            self.models = d.models
            self.draw_log.add(d.record["key"], d.models)
        self.state.pending.add(d.x, d.record)

    def tell(self, x, y, *, replicate: bool = False) -> None:
        """Record the components ``y (J,)`` observed at ``x (d,)``, or ``y (n, J)`` at ``x (n,
        d)`` (data you bring: all checked before any is recorded); checkpoint. An input told
        before warns unless ``replicate=True``; a failure is told by :meth:`tell_failure`."""
        X, Y = checked_observation(
            self.setup.problem, x, y, self.setup.settings.model.outcome_transform
        )
        for x, y in zip(X, Y, strict=True):
            rec = self.state.take_asked(x, self.state.n + 1)
            if rec is None:
                warn_if_repeated(self.state.X, x, replicate)
                rec = user_start(self.state)
            self.state.add(x, y, rec)
        self._save()

    def tell_failure(self, x, reason: str = "failed") -> None:
        """Record that evaluating ``x (d,)`` failed (``reason`` is kept); checkpoint.

        The failure is part of the results and the checkpoint, and ``x`` is not
        asked again once it has failed more than ``max_retries`` times.
        """
        x = check_X(np.atleast_2d(as_float_array(x, "x")), "x", input_dim=self.setup.problem.dim)
        rec = self.state.take_asked(x[0], -1)
        phase = "init" if rec is not None and rec["phase"] == "init" else "acquisition"
        self.state.failures.record(x[0], reason, self.state.n, phase)
        self._save()

    def run(
        self,
        n_iter: int,
        progress: bool = False,
        on_error: str = "raise",
        retries: int = 2,
        *,
        workers: int | None = None,
        scheduler: str | None = None,
        max_failures_in_a_row: int = 25,
        save_every: float = 0.0,
    ) -> xr.Dataset:
        """Evaluate the problem until ``n_iter`` evaluations succeeded (initial design included).

        A failure (exception, non-finite output): ``on_error="raise"`` stops (all
        told is kept), ``"record"`` tells it, ``"retry"`` retries ``retries`` times
        first; ``max_failures_in_a_row`` in a row raise. ``workers=K`` keeps up to K
        in flight on a Dask ``LocalCluster`` (``scheduler``: an existing cluster),
        asking as each result arrives (:mod:`pp_decomp.loop.workers`). ``save_every=s``
        writes the checkpoint at most every ``s`` seconds and when ``run`` ends
        (:mod:`pp_decomp.loop.checkpoint.schedule`; default: after every ask and tell)."""
        policy = ErrorPolicy(on_error, retries, max_failures_in_a_row)
        n_iter = check_positive_int(n_iter, "n_iter")
        with self._schedule.every(save_every, flush=self._save):
            run_loop(
                self.setup, self.state, self.steps, n_iter, progress, policy, workers, scheduler
            )
        return self.results()

    def predict(
        self, X, *, n_samples: int = 1000, quantiles=(0.05, 0.5, 0.95), seed: int = 0
    ) -> xr.Dataset:
        """The posterior at ``X (m, d)`` the last choice saw (:mod:`pp_decomp.loop.predict`)."""
        models = self._current_models("predict")
        return predict(
            self.setup, self.state, models, X, n_samples=n_samples, quantiles=quantiles, seed=seed
        )

    def posterior(self, name: str | None = None, iteration: int | None = None):
        """Each GP's hyperparameter posterior as an ArviZ DataTree (``name``: one GP's;
        ``iteration``: at that step, from the draw log) (:mod:`pp_decomp.loop.posterior`)."""
        models = lambda: self._current_models("posterior")  # noqa: E731
        return posterior(models, self.draw_log, self.state.records, name, iteration)

    def _current_models(self, what: str) -> dict:
        """The last choice's GPs, else (a resumed run) fitted afresh (``fit_afresh``)."""
        if not self.models:
            self.models = fit_afresh(self.setup, self.state, what)
        return self.models

    def results(self) -> xr.Dataset:
        """The run so far as an xarray Dataset (see :func:`pp_decomp.results.build_dataset`)."""
        p, st = self.setup.problem, self.state
        settings = {"problem": p.name, **self.setup.settings.to_dict()}
        settings["maximize"], settings["problem_fingerprint"] = p.maximize, p.fingerprint()
        ds = build_dataset(p, st.X, st.Y, st.records, settings)
        return ds.merge(st.logs_dataset(p.component_names), combine_attrs="override")

    def save(self, path) -> None:
        """Write the results and the loop's state atomically (:mod:`pp_decomp.loop.checkpoint`)."""
        draws = self.draw_log.to_dataset(self.state.records)
        ckpt.write(path, self.results(), loop_state(self.state, self.updater), draws)

    def report(self, out) -> Path:
        """Write this run's pictures and ``report.md`` into folder ``out`` (as ``pp-decomp
        report``, :mod:`pp_decomp.apps.report_pictures`) with this optimiser's problem and the
        models of its last choice; nothing is asked or written to the checkpoint. Returns
        report.md's path. Example: ``opt.run(15); opt.report("run-report")``."""
        notes = [] if self.checkpoint is None else [f"Run file: {self.checkpoint}"]
        return report_of(self.report_view(), out, notes)

    def _save(self) -> None:
        if self._file is not None and self._schedule.due():
            self._file.check_writable()
            self.save(self.checkpoint)
            self._file.first_written()

    def close(self) -> None:
        """Release the checkpoint's lock (also on garbage collection and at exit)."""
        if self._file is not None:
            self._file.release()

    def __enter__(self) -> Optimizer:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    @classmethod
    def open(cls, path, problem: Problem, **kwargs) -> Optimizer:
        """Resume the run checkpointed at ``path`` if it exists (``kwargs`` must then
        agree with its settings), else start one writing there with ``kwargs``."""
        if Path(path).exists():
            return cls.resume(path, problem, **kwargs)
        return cls(problem, checkpoint=path, **kwargs)

    @classmethod
    def resume(
        cls, path, problem: Problem, beta=None, *, read_only: bool = False, **expected
    ) -> Optimizer:
        """Continue the run checkpointed at ``path``: no evaluation is lost or repeated.

        ``problem`` must be the run's problem instance, and every setting given in
        ``expected`` (``strategy=``, ``seed=``, ...) must equal the stored one;
        otherwise a ValueError names both values. ``beta`` is needed only for a
        schedule of the user's own, which cannot be stored. ``read_only``: nothing is
        written to ``path`` (no lock is taken; asks are not saved).
        """
        results, stored = ckpt.read(path)
        updater = expected.pop("updater", None)
        kwargs = check_resume(path, results, problem, expected, beta)  # the same problem first
        opt = cls(named_as_stored(path, results, problem), updater=updater, **kwargs)
        draws = ckpt.read_draws(path)
        opt.draw_log = restore(opt.setup, opt.state, opt.updater, results, stored, draws)
        if not read_only:
            opt.checkpoint, opt._file = path, attach(path, fresh=False)
        return opt
