"""``Optimizer``: the ask/tell loop with refit schedule and atomic checkpoints.

Every random choice at step ``t`` draws from ``SeedSequence(seed, spawn_key=(t, k))``,
and the hyperparameter draws in use are part of the checkpoint, so a run
resumed from its file makes exactly the choices the uninterrupted run makes.
The checkpoint is the results file itself, rewritten atomically (write to a
temporary file, then ``os.replace``) after every ``tell``.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import numpy as np
import xarray as xr

from pp_decomp.acquisition import (
    BetaContinuous,
    BetaDiscrete,
    BetaKandasamy,
    BetaRolland,
    ComposedSurrogate,
    DecomposedSurrogate,
    beta_from_description,
)
from pp_decomp.additive import AdditiveDraws, AdditiveGP, AdditiveSettings
from pp_decomp.components import ComponentGP, HyperDraws, KnownKernels, Priors
from pp_decomp.composition import EntireGP
from pp_decomp.fast import FastComponent, FastGPView, FastSettings, candidate_index
from pp_decomp.kernels import canonical_kernel
from pp_decomp.problem import Problem
from pp_decomp.results import build_dataset
from pp_decomp.space import CandidateSet
from pp_decomp.strategies import (
    NEED_INCUMBENT,
    Context,
    additive_unsupported,
    fixed_unsupported,
    get_strategy,
)
from pp_decomp.validate import check_choice, check_positive_int, check_X, check_Y

# spawn-key streams of one step
_INIT, _FIT, _ACQ, _NOISE = 0, 1, 2, 3


class Optimizer:
    """Bayesian optimisation with decomposed feedback, one evaluation at a time.

    Parameters
    ----------
    problem : Problem
    strategy : str
        A name from :data:`pp_decomp.strategies.STRATEGIES`.
    n_init : int
        Space-filling initial design size (shared by all strategies for a seed);
        at least 2, or 0 with ``inference="fixed"`` (1 for EI and PI, which
        improve on the best observation).
    inference : {"map", "nuts", "fixed"}
        Hyperparameter inference at each refit; ``"fixed"`` conditions on known
        kernels instead (``known_kernels``), as in Wang et al.'s experiments.
    refit_every : int
        Refit hyperparameters every this many new observations; in between the
        last draws are conditioned on the new data.
    kernel : str, optional
        Kernel family of every GP (default ``"se"``, or the known kernels' family).
    priors : Priors, optional
    beta : callable ``t -> β_t``, optional
        Defaults to :class:`BetaDiscrete` (finite domains; ``J`` counted for a
        nonlinear ``g``) or :class:`BetaContinuous`, both scaled by 1/5 as in the papers.
    seed : int
        Root seed of every random choice.
    checkpoint : path, optional
        Results file rewritten atomically after every ``tell``.
    nuts_kwargs : dict, optional
        ``draws``, ``tune``, ``chains`` for NUTS refits.
    max_draws : int
        Hyperparameter draws kept per GP for prediction.
    mc_samples : int
        Posterior-predictive draws for Monte Carlo acquisitions.
    acq_method : {"auto", "lbfgs", "direct"}
        Maximiser on continuous boxes.
    fast : bool
        Full-Bayes fast path (:mod:`pp_decomp.fast`): NUTS refits only when the
        effective sample size of the reweighted draws drops (or they age), exact
        incremental updates in between. Needs ``inference="nuts"`` and a finite
        candidate set.
    fast_settings : FastSettings, optional
        Refit policy of the fast path.
    known_kernels : KnownKernels, optional
        The components' kernels for ``inference="fixed"``; defaults to
        ``problem.known_kernels``. Components are then GPs with these kernels
        and prior means, in output units. The composed strategies (GP-UCB, EI,
        PI, GP-MI, Thompson) use the known composed kernel if there is one, else
        the entire GP with kernel ``Σ g_j k_j g_j`` (linear decompositions).
    additive_settings : AdditiveSettings, optional
        Structure learning and maximisation of the additive strategies
        (``add-gp-ucb*``, ``g-add-gp-ucb*``), which model the composed output with
        one additive GP. ``add-gp-ucb`` learns its decomposition every ``n_cyc``
        steps and its hyperparameters by ``inference``; ``g-add-gp-ucb`` learns
        the dependency graph, lengthscales and noise together by Gibbs sampling,
        as in Rolland et al. Their default ``β_t`` are the papers'
        (``0.2 d log 2t`` and ``0.5 log 2t``).
    """

    def __init__(
        self,
        problem: Problem,
        strategy: str = "d-gpucb",
        *,
        n_init: int = 5,
        inference: str = "map",
        refit_every: int = 1,
        kernel: str | None = None,
        priors: Priors | None = None,
        beta=None,
        seed: int = 0,
        checkpoint=None,
        nuts_kwargs: dict | None = None,
        max_draws: int = 256,
        mc_samples: int = 512,
        acq_method: str = "auto",
        fast: bool = False,
        fast_settings: FastSettings | None = None,
        additive_settings: AdditiveSettings | None = None,
        known_kernels: KnownKernels | None = None,
    ):
        if not isinstance(problem, Problem):
            raise TypeError(f"problem must be a pp_decomp.Problem; got {type(problem).__name__}")
        self.problem = problem
        self.strategy = get_strategy(strategy)
        self.inference = check_choice(inference, "inference", ("map", "nuts", "fixed"))
        # known kernels need no data: the first choice may come from the prior, as
        # in Wang et al.'s Algorithms 1-4, which start at t = 1 with no observation
        fixed = self.inference == "fixed"
        self.n_init = check_positive_int(n_init, "n_init", minimum=0 if fixed else 2)
        if self.n_init == 0 and self.strategy.name in NEED_INCUMBENT:
            raise ValueError(
                f"strategy {strategy!r} improves on the best observation: it needs n_init >= 1"
            )
        self.refit_every = check_positive_int(refit_every, "refit_every")
        self.known_kernels = self._check_known(strategy, kernel, known_kernels)
        if self.known_kernels is not None:
            kernel = self.known_kernels.kernel
        self.kernel = canonical_kernel("se" if kernel is None else kernel)
        self.priors = priors or Priors()
        self.seed = check_positive_int(seed, "seed", minimum=0)
        self.nuts_kwargs = {"draws": 500, "tune": 500, "chains": 2, **(nuts_kwargs or {})}
        self.max_draws = check_positive_int(max_draws, "max_draws")
        self.mc_samples = check_positive_int(mc_samples, "mc_samples")
        self.acq_method = check_choice(acq_method, "acq_method", ("auto", "lbfgs", "direct"))
        self.fast = bool(fast)
        self.fast_settings = fast_settings or FastSettings()
        if self.fast:
            if inference != "nuts":
                raise ValueError(
                    f"fast=True is the full-Bayes path: needs inference='nuts', got {inference!r}"
                )
            if not isinstance(problem.domain, CandidateSet):
                raise ValueError("fast=True needs a finite candidate set (problem.domain)")
            if strategy in ("thompson", "d-thompson", "random"):
                raise ValueError(f"fast=True does not support strategy {strategy!r}")
        self.additive_settings = additive_settings or AdditiveSettings()
        if not isinstance(self.additive_settings, AdditiveSettings):
            raise TypeError("additive_settings must be a pp_decomp.additive.AdditiveSettings")
        if self.strategy.surrogate == "additive":
            self._check_additive(strategy)
        self.structure: dict | None = None
        self._fast: dict[str, FastComponent] = {}
        self._fast_index = candidate_index(problem.domain.X) if self.fast else None
        if beta is None and self.strategy.surrogate == "additive":
            if strategy.startswith("add-"):
                beta = BetaKandasamy(self._max_group_size())
            else:
                beta = BetaRolland()
        if beta is None:
            if isinstance(problem.domain, CandidateSet):
                J = 1 if problem.linear is not None else problem.n_components
                beta = BetaDiscrete(problem.domain.size, n_components=J)
            else:
                beta = BetaContinuous(problem.dim)
        if not callable(beta):
            raise TypeError("beta must be a callable t -> beta_t")
        self.beta = beta
        self.checkpoint = None if checkpoint is None else Path(checkpoint)
        d, J = problem.dim, problem.n_components
        self.X = np.empty((0, d))
        self.Y = np.empty((0, J))
        self.records: list[dict] = []
        self.draws: dict[str, HyperDraws] = {}
        self.gamma = 0.0
        self._pending: tuple[np.ndarray, dict] | None = None
        self._init_design = (
            problem.domain.sample(self.n_init, seed=self._rng(0, _INIT))
            if self.n_init
            else np.empty((0, problem.dim))
        )

    # ------------------------------------------------------------------ helpers
    def _check_known(self, strategy, kernel, known) -> KnownKernels | None:
        if self.inference != "fixed":
            if known is not None:
                raise ValueError(
                    f"known_kernels is used only with inference='fixed'; got "
                    f"inference={self.inference!r}"
                )
            return None
        known = self.problem.known_kernels if known is None else known
        if known is None:
            raise ValueError(
                f"inference='fixed' needs known_kernels=, and problem {self.problem.name!r} "
                "has no known_kernels"
            )
        if not isinstance(known, KnownKernels):
            raise TypeError(f"known_kernels must be a KnownKernels; got {type(known).__name__}")
        known.check(self.problem.n_components, self.problem.dim)
        if kernel is not None and canonical_kernel(kernel) != known.kernel:
            raise ValueError(
                f"kernel={kernel!r} differs from the known kernels' family {known.kernel!r}"
            )
        why = fixed_unsupported(strategy, self.problem, known)
        if why is not None:
            raise ValueError(
                f"strategy {strategy!r} cannot run with inference='fixed' on "
                f"{self.problem.name!r}: {why}"
            )
        return known

    def _check_additive(self, strategy: str) -> None:
        why = additive_unsupported(strategy, self.problem)
        if why is not None:
            raise ValueError(f"strategy {strategy!r} cannot run on {self.problem.name!r}: {why}")
        if self.fast:
            raise ValueError(f"fast=True does not support strategy {strategy!r}")

    def _max_group_size(self) -> int:
        s = self.additive_settings
        if self.strategy.name == "add-gp-ucb-oracle":
            return max(len(g) for g in self.problem.metadata["groups"])
        return s.max_group_size or min(self.problem.dim, 3)

    def _rng(self, t: int, stream: int) -> np.random.Generator:
        return np.random.default_rng(np.random.SeedSequence(self.seed, spawn_key=(t, stream)))

    @property
    def n(self) -> int:
        return self.X.shape[0]

    @property
    def model_names(self) -> list[str]:
        if self.strategy.surrogate == "decomposed":
            return list(self.problem.component_names)
        if self.strategy.surrogate == "composed":
            return ["composed"]
        return []

    def signed_objective(self) -> np.ndarray:
        """Observed ``sign · g(y; x)`` at every evaluation so far: (n,)."""
        return self.problem.sign * self.problem.compose(self.Y, self.X)

    def _targets(self) -> dict[str, np.ndarray]:
        if self.strategy.surrogate == "decomposed":
            return {name: self.Y[:, j] for j, name in enumerate(self.problem.component_names)}
        return {"composed": self.signed_objective()}

    def _fit_fast(self, t: int, rec: dict) -> dict:
        rng = self._rng(t, _FIT)
        views, rec["ess"] = {}, {}
        for name, y in self._targets().items():
            fc = self._fast.get(name)
            if fc is None:
                fc = self._fast[name] = FastComponent(
                    name,
                    self.kernel,
                    self.problem.dim,
                    self.priors,
                    self.problem.domain.bounds,
                    self.problem.domain.X,
                    self.fast_settings,
                )
            if fc.post is not None:
                fc.update(self.X, y)  # reweight first: a collapsed ESS refits this very step
            if fc.needs_refit(self.n):
                fc.refit(self.X, y, rng)
                self.draws[name] = fc.gp.draws
                rec["refit"][name] = _fit_summary(fc.gp)
            rec["ess"][name] = fc.post.ess
            views[name] = FastGPView(fc, self._fast_index, rng)
        return views

    def _fit_additive(self, t: int, rec: dict) -> AdditiveGP:
        """The additive GP of the composed output; structure relearnt every ``n_cyc`` steps."""
        from pp_decomp.additive import gibbs_structure, learn_decomposition
        from pp_decomp.additive.structure import default_amplitudes
        from pp_decomp.components.gp import to_model_scale

        s, name, D = self.additive_settings, self.strategy.name, self.problem.dim
        bounds = self.problem.domain.bounds
        y = self.signed_objective()
        st = self.structure
        if st is not None and self.n - st["learned_at"] < s.n_cyc:
            gp = AdditiveGP(st["groups"], D, priors=self.priors, bounds=bounds, name="additive")
            return gp.condition(self.X, y, AdditiveDraws(**st["draws"]))
        rng = self._rng(t, _FIT)
        start = time.perf_counter()
        Xs, ys, _, _ = to_model_scale(self.X, y, bounds)
        edges = []
        if name.startswith("add-"):
            if name == "add-gp-ucb-oracle":
                groups = [tuple(int(v) for v in g) for g in self.problem.metadata["groups"]]
            else:
                prev = None if st is None else AdditiveDraws(**st["draws"])
                ls = 0.3 if prev is None else np.exp(np.log(prev.ls).mean(0))
                sigma = 0.1 if prev is None else float(prev.sigma.mean())
                groups, _ = learn_decomposition(
                    Xs,
                    ys,
                    self._max_group_size(),
                    np.broadcast_to(ls, (D,)),
                    sigma,
                    current=None if st is None else st["groups"],
                    n_candidates=s.n_decompositions,
                    seed=rng,
                )
            init = None
            if st is not None and len(st["groups"]) == len(groups):
                init = AdditiveDraws(**st["draws"])
            gp = AdditiveGP(
                groups,
                D,
                priors=self.priors,
                bounds=bounds,
                name="additive",
                max_draws=self.max_draws,
            )
            kw = self.nuts_kwargs if self.inference == "nuts" else {}
            gp.fit(self.X, y, self.inference, seed=rng, init=init, **kw)
            draws = gp.draws
        else:
            known = name == "g-add-gp-ucb-oracle"
            res = gibbs_structure(
                Xs,
                ys,
                edges=self.problem.metadata["edges"] if known else (st or {}).get("edges", ()),
                ls=None if st is None else np.asarray(st["draws"]["ls"])[0],
                sigma=0.1 if st is None else float(np.asarray(st["draws"]["sigma"])[0]),
                ls_grid=s.ls_grid,
                sigma_grid=s.sigma_grid,
                p=s.edge_prob,
                overlap=name != "g-add-gp-ucb-disjoint",
                max_clique=max(s.max_clique, 2),
                n_evals=s.gibbs_evals,
                learn_graph=not known,
                seed=rng,
            )
            # with learn_graph=False the groups are the known graph's maximal cliques
            groups, edges = res.groups, [list(e) for e in res.edges]
            draws = AdditiveDraws(res.ls[None], default_amplitudes(groups)[None], [res.sigma])
            gp = AdditiveGP(groups, D, priors=self.priors, bounds=bounds, name="additive")
            gp.condition(self.X, y, draws)
        self.structure = {
            "groups": [list(g) for g in groups],
            "edges": edges,
            "draws": draws.as_dict(),
            "learned_at": self.n,
        }
        # structure learning included in the fit time
        rec["refit"] = {"additive": _fit_summary(gp, time.perf_counter() - start)}
        rec["structure"] = json.dumps([list(g) for g in groups])
        return gp

    def _fit_fixed(self) -> dict:
        """GPs conditioned on the known kernels: components, the known composed GP of
        ``sign · g``, or the entire GP of the signed linear composition."""
        known, p = self.known_kernels, self.problem

        def conditioned(name, y, draws, mean):
            gp = ComponentGP(
                known.kernel, p.dim, bounds=p.domain.bounds, standardize=False, name=name
            )
            return gp.condition(self.X, y, draws, mean=mean)

        composed = self.strategy.surrogate == "composed"
        if composed and known.composed is not None:
            h = self.signed_objective()
            return {
                "composed": conditioned("composed", h, known.composed, p.sign * known.composed_mean)
            }
        comps = [
            conditioned(name, self.Y[:, j], known.draws[j], known.mean[j])
            for j, name in enumerate(p.component_names)
        ]
        if not composed:
            return dict(zip(p.component_names, comps, strict=True))
        return {"composed": EntireGP(comps, p.linear.scaled(p.sign)).fit(self.X, self.Y)}

    def _fit(self, t: int) -> tuple[dict, dict]:
        if self.inference == "fixed":
            return self._fit_fixed(), {}
        refit = not self.draws or (self.n - self.n_init) % self.refit_every == 0
        rng = self._rng(t, _FIT)
        gps, diags = {}, {}
        for name, y in self._targets().items():
            gp = ComponentGP(
                self.kernel,
                self.problem.dim,
                priors=self.priors,
                bounds=self.problem.domain.bounds,
                name=name,
                max_draws=self.max_draws,
            )
            if refit:
                kw = self.nuts_kwargs if self.inference == "nuts" else {}
                gp.fit(self.X, y, self.inference, seed=rng, **kw)
                self.draws[name] = gp.draws
                diags[name] = gp
            else:
                gp.condition(self.X, y, self.draws[name])
            gps[name] = gp
        return gps, diags

    # ------------------------------------------------------------------ ask/tell
    def ask(self) -> np.ndarray:
        """The next input to evaluate, ``(d,)``. Repeated calls return the same input."""
        if self._pending is not None:
            return self._pending[0].copy()
        t = self.n + 1
        start = time.perf_counter()
        rec = {
            "phase": "init",
            "beta": np.nan,
            "acq_value": np.nan,
            "fit_seconds": 0.0,
            "gamma_next": self.gamma,
            "refit": {},
        }
        if self.n < self.n_init:
            x = self._init_design[self.n]
        elif self.strategy.surrogate == "none":
            x, _ = self.strategy.choose(self._context(t, None, None))
            rec["phase"] = "acquisition"
        elif self.strategy.surrogate == "additive":
            model = self._fit_additive(t, rec)
            rec["fit_seconds"] = time.perf_counter() - start
            ctx = self._context(t, None, None, model)
            x, value = self.strategy.choose(ctx)
            rec.update(phase="acquisition", beta=ctx.beta, acq_value=value)
        else:
            if self.fast:
                gps = self._fit_fast(t, rec)
            else:
                gps, fitted = self._fit(t)
                rec["refit"] = {name: _fit_summary(gp) for name, gp in fitted.items()}
            rec["fit_seconds"] = time.perf_counter() - start
            dec = com = None
            if self.strategy.surrogate == "decomposed":
                dec = DecomposedSurrogate([gps[n] for n in self.model_names], self.problem)
            else:
                com = ComposedSurrogate(gps["composed"])
            ctx = self._context(t, dec, com)
            x, value = self.strategy.choose(ctx)
            rec.update(phase="acquisition", beta=ctx.beta, acq_value=value)
            if self.strategy.name == "gp-mi":
                rec["gamma_next"] = self.strategy.build(ctx).updated_gamma(x)
        rec["ask_seconds"] = time.perf_counter() - start
        self._pending = (np.asarray(x, dtype=float), rec)
        return self._pending[0].copy()

    def _context(self, t, dec, com, additive=None) -> Context:
        best = float(np.max(self.signed_objective())) if self.n else -np.inf
        return Context(
            self.problem,
            t,
            float(self.beta(t)),
            self._rng(t, _ACQ),
            dec,
            com,
            best,
            self.gamma,
            self.mc_samples,
            self.acq_method,
            additive,
            self.additive_settings.levels,
        )

    def tell(self, x, y) -> None:
        """Record the system's components ``y (J,)`` observed at ``x (d,)``; checkpoint."""
        x = check_X(np.atleast_2d(x), "x", input_dim=self.problem.dim)
        y = check_Y(np.atleast_2d(y), "y", n=1, n_components=self.problem.n_components)
        if not self.problem.domain.contains(x)[0]:
            raise ValueError(f"x={x[0].tolist()} is outside the problem's domain")
        if self._pending is not None and np.allclose(x[0], self._pending[0], rtol=0, atol=1e-12):
            rec = self._pending[1]
        else:  # evaluated somewhere the loop did not ask for: keep it, without acquisition info
            rec = {
                "phase": "user",
                "beta": np.nan,
                "acq_value": np.nan,
                "fit_seconds": 0.0,
                "ask_seconds": 0.0,
                "gamma_next": self.gamma,
                "refit": {},
            }
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

            steps = tqdm(
                steps,
                desc=f"{self.problem.name}/{self.strategy.name}",
                unit="eval",
                initial=self.n,
                total=n_iter,
            )
        for _ in steps:
            x = self.ask()
            t = self.n + 1
            self.tell(x, self.problem.evaluate(x[None, :], seed=self._rng(t, _NOISE))[0])
        return self.results()

    # ------------------------------------------------------------------ results & I/O
    def settings(self) -> dict:
        """Every setting that determines the run, as stored in the results' attributes."""
        beta = self.beta.describe() if hasattr(self.beta, "describe") else {"name": repr(self.beta)}
        return {
            "problem": self.problem.name,
            "strategy": self.strategy.name,
            "seed": self.seed,
            "n_init": self.n_init,
            "inference": self.inference,
            "refit_every": self.refit_every,
            "kernel": self.kernel,
            "priors": vars(self.priors),
            "beta_schedule": beta,
            "nuts_kwargs": self.nuts_kwargs,
            "max_draws": self.max_draws,
            "mc_samples": self.mc_samples,
            "acq_method": self.acq_method,
            "maximize": self.problem.maximize,
            "fast": self.fast,
            "fast_settings": vars(self.fast_settings),
            "additive_settings": vars(self.additive_settings),
            "known_kernels": None if self.known_kernels is None else self.known_kernels.describe(),
        }

    def _state(self) -> dict:
        return {
            "gamma": self.gamma,
            "draws": {
                name: {
                    k: (None if v is None else np.asarray(v).tolist()) for k, v in vars(d).items()
                }
                for name, d in self.draws.items()
            },
            "records": [_jsonable(r) for r in self.records],
            "structure": self.structure,
            "fast": {
                name: {
                    "y_mean": fc.gp.y_mean,
                    "y_std": fc.gp.y_std,
                    "n_at_refit": fc.n_at_refit,
                    "n_conditioned": len(fc.post.X),
                }
                for name, fc in self._fast.items()
            },
        }

    def results(self) -> xr.Dataset:
        """The run so far as an xarray Dataset (see :func:`pp_decomp.results.build_dataset`)."""
        ds = build_dataset(self.problem, self.X, self.Y, self.records, self.settings())
        ds.attrs["checkpoint_state"] = json.dumps(self._state())
        return ds

    def save(self, path) -> None:
        """Write the results atomically: a temporary file, fsync, then ``os.replace``."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
        self.results().to_netcdf(tmp, engine="h5netcdf")
        with open(tmp, "rb+") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp, path)

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
        with xr.open_dataset(path, engine="h5netcdf") as ds:
            ds = ds.load()
        s = json.loads(ds.attrs["settings"])
        if s["problem"] != problem.name:
            raise ValueError(f"checkpoint is for problem {s['problem']!r}, not {problem.name!r}")
        kwargs = dict(
            strategy=s["strategy"],
            n_init=s["n_init"],
            inference=s["inference"],
            refit_every=s["refit_every"],
            kernel=s["kernel"],
            priors=Priors(**s["priors"]),
            seed=s["seed"],
            nuts_kwargs=s["nuts_kwargs"],
            max_draws=s["max_draws"],
            mc_samples=s["mc_samples"],
            acq_method=s["acq_method"],
            checkpoint=path,
            fast=s.get("fast", False),
            fast_settings=FastSettings(**s.get("fast_settings", {})),
            additive_settings=AdditiveSettings(**s.get("additive_settings", {})),
        )
        if s.get("known_kernels") is not None:
            kwargs["known_kernels"] = KnownKernels.from_description(s["known_kernels"])
        if "beta" not in overrides:
            kwargs["beta"] = beta_from_description(s["beta_schedule"])
        kwargs.update(overrides)
        opt = cls(problem, **kwargs)
        state = json.loads(ds.attrs["checkpoint_state"])
        opt.X = np.asarray(ds["x"].values, dtype=float).reshape(-1, problem.dim)
        opt.Y = np.asarray(ds["y"].values, dtype=float).reshape(-1, problem.n_components)
        opt.gamma = float(state["gamma"])
        opt.draws = {
            name: HyperDraws(**{k: (None if v is None else np.asarray(v)) for k, v in d.items()})
            for name, d in state["draws"].items()
        }
        opt.records = state["records"]
        opt.structure = state.get("structure")
        for name, f in state.get("fast", {}).items():
            fc = opt._fast[name] = FastComponent(
                name,
                opt.kernel,
                problem.dim,
                opt.priors,
                problem.domain.bounds,
                problem.domain.X,
                opt.fast_settings,
            )
            y = opt._targets()[name]
            a, b = f["n_at_refit"], f["n_conditioned"]
            fc.rebuild(opt.X[:a], y[:a], opt.draws[name], f["y_mean"], f["y_std"])
            fc.update(opt.X[:b], y[:b])  # the same appends, in the same order, as the run
        return opt


def _jsonable(obj):
    if isinstance(obj, dict):
        return {k: _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, np.generic):
        return obj.item()
    return obj


def _fit_summary(gp: ComponentGP | AdditiveGP, seconds: float | None = None) -> dict:
    """Hyperparameter means and diagnostics of a refit (``seconds`` defaults to the fit's)."""
    d = gp.diagnostics
    return {
        "ls_mean": gp.draws.ls.mean(0),
        "eta_mean": float(gp.draws.eta.mean()),
        "sigma_mean": float(gp.draws.sigma.mean()),
        "rhat_max": d.rhat_max,
        "ess_bulk_min": d.ess_bulk_min,
        "divergences": d.divergences,
        "fit_seconds": d.seconds if seconds is None else seconds,
    }
