"""``Optimizer``: the ask/tell loop.

Every random choice at step ``t`` draws from ``SeedSequence(seed, spawn_key=(t, k))``,
and the hyperparameter draws in use are part of the checkpoint, so a run
resumed from its file makes exactly the choices the uninterrupted run makes.
The loop itself is thin: settings are validated by
:class:`~pp_decomp.loop.settings.RunSettings`, models follow the data through an
updater (:mod:`pp_decomp.loop.updaters`), strategies choose
(:mod:`pp_decomp.strategies`) and files are written by :mod:`pp_decomp.loop.checkpoint`.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import xarray as xr

from pp_decomp.acquisition import ComposedSurrogate, DecomposedSurrogate
from pp_decomp.loop import checkpoint
from pp_decomp.loop.records import jsonable, step_record
from pp_decomp.loop.settings import RunSettings
from pp_decomp.loop.updaters import LoopData, make_updater
from pp_decomp.problem import Problem
from pp_decomp.results import build_dataset
from pp_decomp.strategies import Context, get_strategy
from pp_decomp.validate import check_positive_int, check_X, check_Y

# spawn-key streams of one step
_INIT, _FIT, _ACQ, _NOISE = 0, 1, 2, 3


class Optimizer:
    """Bayesian optimisation with decomposed feedback, one evaluation at a time.

    Parameters
    ----------
    problem : Problem
    strategy : str, optional
        A name from :data:`pp_decomp.strategies.STRATEGIES`; default ``d-gpucb``
        for a linear ``g`` and ``d-gpucb-mc`` otherwise. A strategy that cannot
        run on the problem is refused here, before any evaluation.
    n_init : int
        Space-filling initial design size (shared by all strategies for a seed);
        at least 2, or 0 with ``inference="fixed"``.
    inference : {"map", "nuts", "fixed"}
        Hyperparameters by MAP or NUTS at each refit, or ``"fixed"``: GPs
        conditioned on known kernels (``known_kernels``, default
        ``problem.known_kernels``), as in Wang et al.'s experiments.
    refit_every : int
        Refit every this many new observations; in between the last draws are
        conditioned on the new data.
    kernel : str, optional
        Kernel family of every GP (default ``"se"``, or the known kernels').
    priors : Priors, optional
    beta : callable ``t -> β_t``, optional
        Default :func:`pp_decomp.loop.settings.default_beta`.
    seed : int
        Root seed of every random choice.
    checkpoint : path, optional
        Results file rewritten atomically after every ``tell``.
    nuts_kwargs : dict, optional
        ``draws``, ``tune``, ``chains`` of NUTS refits.
    max_draws, mc_samples : int
        Hyperparameter draws kept per GP; posterior-predictive draws of the
        Monte Carlo acquisitions.
    acq_method : {"auto", "lbfgs", "direct"}
        Maximiser on continuous boxes.
    fast : bool
        The full-Bayes fast path (:mod:`pp_decomp.loop.update_fast`; needs
        ``inference="nuts"``), refit policy ``fast_settings``.
    additive_settings : AdditiveSettings, optional
        Structure learning and maximisation of the additive strategies.
    known_kernels : KnownKernels, optional
        The components' kernels for ``inference="fixed"``.
    """

    def __init__(self, problem: Problem, strategy: str | None = None, *, checkpoint=None, **kw):
        if not isinstance(problem, Problem):
            raise TypeError(f"problem must be a pp_decomp.Problem; got {type(problem).__name__}")
        self.problem = problem
        self.settings = RunSettings.build(problem, strategy, **kw)
        self.strategy = get_strategy(self.settings.strategy)
        self.checkpoint = None if checkpoint is None else Path(checkpoint)
        self.X = np.empty((0, problem.dim))
        self.Y = np.empty((0, problem.n_components))
        self.records: list[dict] = []
        self.gamma = 0.0
        self.updater = make_updater(self.settings, self.strategy, problem)
        self._pending: tuple[np.ndarray, dict] | None = None
        n_init = self.settings.n_init
        self._init_design = (
            problem.domain.sample(n_init, seed=self._rng(0, _INIT))
            if n_init
            else np.empty((0, problem.dim))
        )

    def _rng(self, t: int, stream: int) -> np.random.Generator:
        seq = np.random.SeedSequence(self.settings.seed, spawn_key=(t, stream))
        return np.random.default_rng(seq)

    @property
    def n(self) -> int:
        """Evaluations told so far."""
        return self.X.shape[0]

    def signed_objective(self) -> np.ndarray:
        """Observed ``sign · g(y; x)`` at every evaluation so far: (n,)."""
        return self.problem.sign * self.problem.compose(self.Y, self.X)

    def _data(self) -> LoopData:
        if self.strategy.surrogate == "decomposed":
            names = self.problem.component_names
            targets = {name: self.Y[:, j] for j, name in enumerate(names)}
        else:
            targets = {self.strategy.surrogate: self.signed_objective()}
        return LoopData(self.X, self.Y, targets)

    # ------------------------------------------------------------------ ask/tell
    def ask(self) -> np.ndarray:
        """The next input to evaluate, ``(d,)``. Repeated calls return the same input."""
        if self._pending is not None:
            return self._pending[0].copy()
        t, start = self.n + 1, time.perf_counter()
        rec = step_record("init", self.gamma)
        if self.n < self.settings.n_init:
            x = self._init_design[self.n]
        else:
            ctx = self._context(t, rec)
            rec["fit_seconds"] = time.perf_counter() - start
            x, value = self.strategy.choose(ctx)
            rec.update(phase="acquisition", beta=ctx.beta, acq_value=value)
            rec["gamma_next"] = self.strategy.state_after(ctx, x)
            if self.strategy.surrogate == "none":
                rec.update(beta=np.nan, fit_seconds=0.0)
        rec["ask_seconds"] = time.perf_counter() - start
        self._pending = (np.asarray(x, dtype=float), rec)
        return self._pending[0].copy()

    def _context(self, t: int, rec: dict) -> Context:
        s, kind = self.settings, self.strategy.surrogate
        models = {}
        if self.updater is not None:
            models = self.updater.update(self._data(), t, self._rng(t, _FIT), rec)
        surrogates = {}
        if kind == "decomposed":
            comps = [models[n] for n in self.problem.component_names]
            surrogates["decomposed"] = DecomposedSurrogate(comps, self.problem)
        elif kind == "composed":
            surrogates["composed"] = ComposedSurrogate(models["composed"])
        elif kind == "additive":
            surrogates["additive"] = models["additive"]
        best = float(np.max(self.signed_objective())) if self.n else -np.inf
        return Context(
            self.problem,
            t,
            float(s.beta(t)),
            self._rng(t, _ACQ),
            best=best,
            gamma=self.gamma,
            mc_samples=s.mc_samples,
            method=s.acq_method,
            levels=s.additive_settings.levels,
            **surrogates,
        )

    def tell(self, x, y) -> None:
        """Record the system's components ``y (J,)`` observed at ``x (d,)``; checkpoint."""
        x = check_X(np.atleast_2d(x), "x", input_dim=self.problem.dim)
        y = check_Y(np.atleast_2d(y), "y", n=1, n_components=self.problem.n_components)
        if not self.problem.domain.contains(x)[0]:
            raise ValueError(f"x={x[0].tolist()} is outside the problem's domain")
        pending = self._pending
        if pending is not None and np.allclose(x[0], pending[0], rtol=0, atol=1e-12):
            rec = pending[1]
        else:  # evaluated somewhere the loop did not ask for: keep it, without acquisition info
            rec = step_record("user", self.gamma)
        self.X = np.vstack([self.X, x])
        self.Y = np.vstack([self.Y, y])
        self.gamma = float(rec["gamma_next"])
        self.records.append(rec)
        self._pending = None
        if self.checkpoint is not None:
            self.save(self.checkpoint)

    def run(self, n_iter: int, progress: bool = False) -> xr.Dataset:
        """Evaluate the problem until ``n_iter`` evaluations exist (initial design included)."""
        n_iter = check_positive_int(n_iter, "n_iter")
        steps = range(self.n, n_iter)
        if progress:
            from tqdm.auto import tqdm

            desc = f"{self.problem.name}/{self.strategy.name}"
            steps = tqdm(steps, desc=desc, unit="eval", initial=self.n, total=n_iter)
        for _ in steps:
            x = self.ask()
            t = self.n + 1
            self.tell(x, self.problem.evaluate(x[None, :], seed=self._rng(t, _NOISE))[0])
        return self.results()

    # ------------------------------------------------------------------ results & I/O
    def _state(self) -> dict:
        return {
            "gamma": self.gamma,
            "records": [jsonable(r) for r in self.records],
            "updater": {} if self.updater is None else jsonable(self.updater.state()),
        }

    def results(self) -> xr.Dataset:
        """The run so far as an xarray Dataset (see :func:`pp_decomp.results.build_dataset`)."""
        settings = {"problem": self.problem.name, **self.settings.to_dict()}
        settings["maximize"] = self.problem.maximize
        return build_dataset(self.problem, self.X, self.Y, self.records, settings)

    def save(self, path) -> None:
        """Write the results and the loop's state atomically (:mod:`pp_decomp.loop.checkpoint`)."""
        checkpoint.write(path, self.results(), self._state())

    @classmethod
    def open(cls, path, problem: Problem, **kwargs) -> Optimizer:
        """Resume the run checkpointed at ``path`` if it exists, else start one writing there.

        ``kwargs`` are the settings of a new run (ignored when resuming).
        """
        if Path(path).exists():
            return cls.resume(path, problem)
        return cls(problem, checkpoint=path, **kwargs)

    @classmethod
    def resume(cls, path, problem: Problem, **overrides) -> Optimizer:
        """Rebuild an optimiser from its checkpoint; no evaluation is lost or repeated."""
        import json

        results, state = checkpoint.read(path)
        s = json.loads(results.attrs["settings"])
        if s["problem"] != problem.name:
            raise ValueError(f"checkpoint is for problem {s['problem']!r}, not {problem.name!r}")
        kwargs = {**RunSettings.kwargs_from_dict(s), **overrides}
        opt = cls(problem, checkpoint=path, **kwargs)
        opt.X, opt.Y = checkpoint.observations(results, problem.dim, problem.n_components)
        opt.gamma = float(state["gamma"])
        opt.records = state["records"]
        if opt.updater is not None:
            opt.updater.restore(state["updater"], opt._data())
        return opt
