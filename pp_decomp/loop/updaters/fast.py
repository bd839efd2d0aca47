"""The fast full-Bayes path: NUTS refits off the critical path, exact updates in between.

Two costs dominate a full-Bayes loop: re-sampling the hyperparameter posterior
of every GP at every step, and predicting for every draw. Between refits this
updater keeps each GP's draws in an
:class:`~pp_decomp.components.posterior.incremental.IncrementalPosterior`: every new
observation reweights them exactly (sequential importance sampling) and is
appended to each draw's Cholesky factor in ``O(S n)`` (on a candidate set the
posterior at every candidate follows by one rank-one term).

Refits run in a background thread while the loop goes on:

* when the effective sample size of the reweighted draws falls below
  ``ess_refit · S``, or the Pareto ``k̂`` of their weights says the ESS cannot
  be trusted (or, if set, the draws are ``max_age`` observations old), a
  refit on the data so far is started (at most ``max_in_flight`` at once, the
  lowest ESS first): importance sampling from a proposal around the current
  draws (:mod:`pp_decomp.components.inference.refresh`) where its weights pass their
  checks and fewer than ``max_refreshes`` refits in a row were made so, else a
  warm-started, convergence-checked NUTS run;
* it is consumed at a step fixed when it starts (``lag`` steps later, more as
  the data grow: :meth:`~pp_decomp.loop.FastSettings.lag_at`), waiting
  for it if it is not done: the new draws, which know the data up to the
  start, are reweighted by the observations since. Choices therefore do not
  depend on timing, and a resumed run relaunches the refits in flight with
  their seeds and makes exactly the same choices;
* on many points (``mode_from``, 300 by default) NUTS is off the ask's path
  (a NUTS run there takes longer than the lag gives it): the refresh weighs
  its proposal in growing batches, a refit that may not refresh is made
  around the posterior's mode (:mod:`pp_decomp.components.inference.laplace`),
  and a refit whose weights fail their checks is not used: the step keeps the
  last accepted draws, reweighted, records the refit with
  ``converged=False`` (``fit_draws`` ``"kept"``), and starts a NUTS repair
  consumed ``REPAIR_LAGS · lag_at(n)`` steps later;
* draws that have collapsed (ESS below ``ess_collapse · S``) are not used for
  a decision: the step waits for the refit in flight and, if its reweighted
  draws have collapsed too, for a refit on all the data.

A GP's posterior on few points is sampled without NUTS while the prior is a
good proposal (:mod:`pp_decomp.components.inference.importance`): each fit first tries
``prior_draws`` draws of the prior weighted by their likelihood, ``kept_draws``
of them (fewer on many points: :meth:`~pp_decomp.loop.FastSettings.kept_at`)
resampled if the weights' Pareto ``k̂`` and ESS pass; after the first fit that
fails the checks, later fits refresh or run NUTS (the posterior only
concentrates). A first fit on data brought in at once, on more points than the
prior can serve, is made around the posterior's mode instead
(:mod:`pp_decomp.components.inference.laplace`, the same checks), the prior tried
first only where it can reach the ESS (:func:`_first_fit`); where neither passes,
NUTS starts at the mode. The first fits are made at the first acquisition step, at once and in
parallel on the machine's cores (a few tenths of a second on the design's
points); if one needs NUTS, that step waits for it.

The standardisation of ``y`` is frozen between refits so that reweighting is exact.
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace

import numpy as np

from pp_decomp._runtime import status, usable_cores
from pp_decomp.components import ComponentGP, HyperDraws
from pp_decomp.components.diagnostics import KEPT, FitDiagnostics, warn_if_bad
from pp_decomp.components.gp.warped import WarpedGP, latent_observations
from pp_decomp.components.inference.importance import prior_importance_fit
from pp_decomp.components.inference.laplace import (
    GROW,
    laplace_fit,
    laplace_mode,
    prior_ess_fraction,
)
from pp_decomp.components.inference.nuts import import_sampler
from pp_decomp.components.inference.refresh import refresh_fit
from pp_decomp.components.posterior.batched import JITTER, GPPosterior
from pp_decomp.components.posterior.draws import KernelDraws
from pp_decomp.components.posterior.incremental import IncrementalPosterior, weights_degraded
from pp_decomp.loop.records import fit_summary
from pp_decomp.loop.updaters.base import Updater, gp_arguments
from pp_decomp.loop.updaters.fast_view import FastGPView, candidate_index
from pp_decomp.loop.updaters.fast_warped import FastWarpedGPView
from pp_decomp.space import CandidateSet
from pp_decomp.validate import as_generator, int_seed

PRIOR_FIRST = 30  # up to this many points a first fit tries the prior before the mode
# a NUTS repair is used this many lags after it starts: on 1060 points it took longer
# than one lag of asks (docs/design.md, "Refits on many points")
REPAIR_LAGS = 2


@dataclass
class RefitJob:
    """A refit running in the background: on the first ``start_n`` observations,
    seeded by ``seed``, consumed at step ``consume_at``; ``repair``: a NUTS run
    that replaces a refit whose weights failed their checks."""

    start_n: int
    consume_at: int
    seed: int
    repair: bool = False
    future: object = None

    def state(self) -> dict:
        """What relaunches the job on resume."""
        out = {"start_n": self.start_n, "consume_at": self.consume_at, "seed": self.seed}
        return out | ({"repair": True} if self.repair else {})


@dataclass(frozen=True)
class Route:
    """What a refit tries before NUTS: ``refresh``, a proposal around the previous
    draws; ``mode``, on many points: that proposal weighed in growing batches,
    then one around the posterior's mode, and no NUTS (the caller keeps its draws
    and repairs)."""

    refresh: bool
    mode: bool = False


def _refit(gp_args: dict, X, y, seed: int, init, init_scale, nuts: dict, prior, route: Route):
    """One fit (in the background thread but for a GP's first): a fresh GP, so
    nothing is shared. By importance sampling from the prior if ``prior``
    ``(n_prior, n_keep, k_max)`` is given and the weights pass; else, for a first
    fit (no ``init``) with ``prior`` given, around the posterior's mode
    (:mod:`~pp_decomp.components.inference.laplace`) if those weights pass, NUTS
    starting at the mode if not; else, if ``route.refresh``, from a proposal
    around the previous draws ``init`` (:mod:`~pp_decomp.components.inference.refresh`)
    if those weights pass; else, if ``route.mode``, around the posterior's mode,
    the fit's diagnostics saying ``inference="kept"`` where those fail too (its
    draws are not to be used); else by NUTS, warm-started at ``init``.
    ``init`` is on the model scale of a GP whose outputs were standardised by
    ``init_scale = (ȳ, s_y)``, rescaled here to this fit's."""
    start = time.perf_counter()
    gp = ComponentGP(**gp_args)
    rng = as_generator(seed)
    n_keep = gp_args["max_draws"]
    if prior is not None and init is None:
        if _first_fit(gp, X, y, prior, n_keep, rng):
            return gp
        init, init_scale = gp.draws, (gp.y_mean, gp.y_std)  # NUTS starts at the mode
    elif prior is not None and prior_importance_fit(gp, X, y, *prior, rng):
        return gp
    if init is not None:
        gp._set_data(X, y)
        mean, std = init_scale
        init = rescaled(init, std / gp.y_std, gp, (mean - gp.y_mean) / gp.y_std)
    grow = GROW if route.mode else None
    if route.refresh and refresh_fit(gp, X, y, init, n_keep, rng, grow=grow):
        return gp
    if route.mode:
        if not laplace_fit(gp, X, y, n_keep, rng):
            seconds = time.perf_counter() - start
            gp.diagnostics = FitDiagnostics(KEPT, n_keep, seconds=seconds, converged=False)
        return gp
    gp.fit(X, y, "nuts", seed=seed, init=init, warn=False, **nuts)  # warned when consumed
    return gp


def _first_fit(gp, X, y, prior: tuple, n_keep: int, rng) -> bool:
    """A GP's first fit without NUTS, if one passes its checks (module docstring):
    from the prior, else around the mode. On up to :data:`PRIOR_FIRST` points the
    prior is tried first, as it always was; on more the mode and its curvature
    come first and the prior is tried only if it can reach ``n_keep`` draws'
    ESS (:func:`~pp_decomp.components.inference.laplace.prior_ess_fraction`).
    When it returns False, ``gp`` holds the MAP fit, or nothing where the mode
    search failed."""
    if len(X) <= PRIOR_FIRST:
        return prior_importance_fit(gp, X, y, *prior, rng) or laplace_fit(gp, X, y, n_keep, rng)
    # the mode's own stream: the prior's draws stay what they would be without it
    mode = laplace_mode(gp, X, y, np.random.default_rng(rng.integers(2**63)))
    if mode is not None and prior_ess_fraction(gp, mode, rng) * prior[0] >= n_keep:
        # a failed attempt leaves gp as it was: at the mode
        if prior_importance_fit(gp, X, y, *prior, rng):
            return True
    return mode is not None and laplace_fit(gp, X, y, n_keep, rng, mode)


def rescaled(draws, factor: float, gp: ComponentGP, shift: float = 0.0):
    """``draws`` moved to where the posterior is after the outputs' standardisation
    changed by ``factor`` (the old standard deviation of ``y`` over the new) and
    ``shift`` (the old mean less the new, over the new standard deviation).

    A learned output warp (draws with ``warp_loc``) absorbs the change exactly:
    ``u_old = (u_new - shift) / factor``, so ``c ↦ shift + factor · c`` and ``s ↦
    factor · s`` warp every output to the same value, and nothing else moves.

    The amplitude and noise are in standardised units, so their likelihood moves
    by ``factor``; their prior does not. In a Gaussian approximation of ``log θ``
    with prior variance ``s₀²`` and posterior variance ``s₁²`` (of the draws),
    the likelihood's share of the posterior precision is ``1 − s₁²/s₀²``, and the
    posterior mean moves by that share of ``log factor``: ``θ · factor^(1 − s₁²/s₀²)``
    (clipped to ``[0, 1]``). Where the data decide (``s₁ ≪ s₀``) that is the full
    rescaling; where the prior does, none: the default ``η ~ Gamma(400, 400)``,
    and a noise below the jitter, which the data cannot resolve. Rescaling those
    by the full factor put the refresh's proposal (:mod:`pp_decomp.components.inference.refresh`)
    off the posterior: on the synthetic problem 24 of its 36 attempts had an ESS
    under 20 (of 4096) and fell back to NUTS.
    """
    if getattr(draws, "warp_loc", None) is not None:
        loc, scale = shift + factor * draws.warp_loc, factor * draws.warp_scale
        return replace(draws, warp_loc=loc, warp_scale=scale)
    moved = {}
    for name in _output_scaled(draws):
        values = getattr(draws, name)
        share = 1.0 - np.var(np.log(values)) / gp.log_prior_variance(name)
        moved[name] = values * factor ** float(np.clip(share, 0.0, 1.0))
    if isinstance(draws, HyperDraws):
        return replace(draws, **moved)
    return KernelDraws({**draws.values, **moved})


def _output_scaled(draws) -> list[str]:
    """The hyperparameters in standardised output units: amplitudes and the noise."""
    if isinstance(draws, HyperDraws):
        return ["eta", "sigma"]
    return [n for n in draws.values if n == "sigma" or n == "eta" or n.startswith("eta_")]


class FastComponent:
    """One GP on the fast path: its reweighted draws and its refit in flight."""

    def __init__(self, name: str, settings, problem):
        fs = settings.inference.fast_path
        self.gp_args = gp_arguments(settings, problem, name, fs.kept_draws)
        self.gp = ComponentGP(**self.gp_args)
        dom = problem.domain
        self.Xc_scaled = self.gp.scale_X(dom.X) if isinstance(dom, CandidateSet) else None
        self.settings = fs
        # the sampler's own settings pass through; sizes come from fast_settings
        self.sampler = dict(
            target_accept=settings.inference.nuts.target_accept,
            low_rank_mass_matrix=settings.inference.nuts.low_rank_mass_matrix,
        )
        self.post: IncrementalPosterior | None = None
        self.u = np.empty(0)  # the standardised outputs conditioned on
        self.n_at_refit = 0
        self.job: RefitJob | None = None
        self.prior_proposal = True  # until a fit by importance sampling fails its checks
        self.ess_per_draw: float | None = None  # of the last NUTS fit
        self.refreshes = 0  # refits by importance sampling from the draws since NUTS ran

    @property
    def nuts(self) -> dict:
        """The next NUTS fit's settings; its draws sized by the last fit's ESS per
        draw (:meth:`~pp_decomp.loop.FastSettings.draws_for`)."""
        s = self.settings
        draws = s.draws_for(self.ess_per_draw)
        return dict(draws=draws, tune=s.tune, chains=s.chains, repairs=s.repairs, **self.sampler)

    def prior(self, n: int) -> tuple | None:
        """The importance-sampling attempt of the next fit on ``n`` points, or ``None``
        (NUTS only)."""
        s = self.settings
        if not (self.prior_proposal and s.prior_draws):
            return None
        return s.prior_draws, s.kept_at(n), s.k_threshold(s.prior_draws)

    def args_at(self, n: int) -> dict:
        """The GP arguments of a fit on ``n`` points: it keeps ``kept_at(n)`` draws."""
        return dict(self.gp_args, max_draws=self.settings.kept_at(n))

    def _standardise(self, y):
        return (np.asarray(y, dtype=float) - self.gp.y_mean) / self.gp.y_std

    def rebuild(self, X, y, draws: HyperDraws, y_mean, y_std, L_inv=None) -> None:
        """Posterior from ``draws`` on ``(X, y)``, standardisation frozen from now on;
        ``L_inv``: the draws' factors on ``X`` where a fit already made them."""
        self.gp.y_mean, self.gp.y_std = y_mean, y_std
        self.gp.draws = draws  # the next refit warm-starts from these
        self.u = self._standardise(y)
        latent, _ = latent_observations(self.gp, self.u, draws)
        self.post = IncrementalPosterior(
            self.gp.posterior_kernel,
            self.gp.scale_X(X),
            latent,
            draws,
            self.Xc_scaled,
            self.gp.mean_var,
            L_inv,
        )
        self.n_at_refit = len(X)

    def update(self, X, y) -> None:
        """Append the observations beyond those already conditioned on."""
        for i in range(len(self.post.X), len(X)):
            u = self._standardise(y[i : i + 1])
            self.u = np.append(self.u, u)
            latent, slope = latent_observations(self.gp, u, self.gp.draws)
            x = self.gp.scale_X(X[i : i + 1])[0]
            self.post.append(x, latent[..., 0], None if slope is None else slope[:, 0])

    def adopt(self, fitted: ComponentGP, X, y) -> None:
        """Use a refit's draws: rebuilt on the data it saw, then appended the rest."""
        n = len(fitted.X_train)
        factor = self._factor_of(fitted)
        self.rebuild(X[:n], y[:n], fitted.draws, fitted.y_mean, fitted.y_std, factor)
        self.update(X, y)
        self.gp.idata, self.gp.diagnostics = fitted.idata, fitted.diagnostics
        d = fitted.diagnostics
        self.prior_proposal = d.proposal == "prior"
        self.refreshes = self.refreshes + 1 if d.proposal == "posterior" else 0
        if d.inference == "nuts" and d.converged:
            self.ess_per_draw = min(d.ess_bulk_min, d.ess_tail_min) / d.n_draws

    def _factor_of(self, fitted: ComponentGP):
        """``fitted``'s ``L⁻¹`` where its posterior's ``K`` is the one
        :class:`IncrementalPosterior` would build (a kernel GP's own posterior of
        the same draws, kernel, constant mean and jitter), else ``None``."""
        post = fitted.posterior
        same = (
            isinstance(post, GPPosterior)
            and post.draws is fitted.draws
            and post.jitter == JITTER
            and post.mean_var == self.gp.mean_var
            and isinstance(post.kernel, str)
            and post.kernel == self.gp.posterior_kernel
        )
        return post.L_inv if same else None

    @property
    def collapsed(self) -> bool:
        """Whether the reweighted draws' ESS is below ``ess_collapse · S``."""
        if self.post is None:
            return False
        return self.post.ess < self.settings.ess_collapse * len(self.post.logw)

    def needs_refit(self, n: int) -> bool:
        """Whether the reweighted draws have degraded (ESS, Pareto ``k̂``) or, when
        ``max_age`` is set, aged enough for a refit."""
        s, S = self.settings, len(self.post.logw)
        if weights_degraded(self.post.ess, self.post.pareto_k, S, s.ess_refit, s.k_threshold(S)):
            return True
        return s.max_age is not None and n - self.n_at_refit >= s.max_age

    def launch(self, X, y, seed: int, consume_at: int, pool, repair: bool = False) -> None:
        """Start a background refit on ``(X, y)`` from the current draws resampled by
        their weights: the proposal's centres, or where the chains start (the
        posterior now). It may refresh them by importance sampling while fewer
        than ``max_refreshes`` refits in a row have; on ``mode_from`` points or
        more it tries the mode instead of NUTS. ``repair``: NUTS only."""
        self.job = RefitJob(len(X), consume_at, seed, repair)
        init = None
        if self.post is not None:
            init = self.gp.draws.subset(self.post.resample(np.random.default_rng(seed)))
        s = self.settings
        refresh = not repair and init is not None and self.refreshes < s.max_refreshes
        route = Route(refresh, mode=not repair and init is not None and len(X) >= s.mode_from)
        prior = None if repair else self.prior(len(X))
        scale = (self.gp.y_mean, self.gp.y_std)
        args = (X.copy(), y.copy(), seed, init, scale, self.nuts, prior, route)
        self.job.future = pool.submit(_refit, self.args_at(len(X)), *args)

    def first_fit(self, X, y, seed: int, pool: ThreadPoolExecutor):
        """The GP's first fit, started now in ``pool`` (module docstring): its future."""
        args = (X, y, seed, None, (0.0, 1.0), self.nuts, self.prior(len(X)), Route(False))
        return pool.submit(_refit, self.args_at(len(X)), *args)


_POOL_LOCK = threading.Lock()
_POOL: ThreadPoolExecutor | None = None


def _pool() -> ThreadPoolExecutor:
    """One background thread for every fast path of the process (refits queue on it)."""
    global _POOL
    with _POOL_LOCK:
        if _POOL is None:
            _POOL = ThreadPoolExecutor(max_workers=1, thread_name_prefix="pp_decomp-refit")
        return _POOL


class FastUpdater(Updater):
    """The fast path as a model updater (see the module docstring)."""

    def __init__(self, settings, problem):
        self.settings, self.problem = settings, problem
        self.components: dict[str, FastComponent] = {}
        import_sampler()  # here, not in the first refit's thread beside an ask
        dom = problem.domain
        self.index = candidate_index(dom.X) if isinstance(dom, CandidateSet) else None

    def _component(self, name: str) -> FastComponent:
        if name not in self.components:
            self.components[name] = FastComponent(name, self.settings, self.problem)
        return self.components[name]

    def _first_fits(self, data, seeds, notes) -> None:
        """First fits of the GPs without one, in parallel on the machine's cores
        (each on its own seed, drawn in the components' order: the same fits)."""
        new = [n for n in data.targets if self._component(n).post is None]
        new = [n for n in new if self.components[n].job is None]
        if not new:
            return
        status(f"first fits of {', '.join(new)}")
        workers = min(len(new), usable_cores())
        with ThreadPoolExecutor(workers, thread_name_prefix="pp_decomp-first-fit") as pool:
            futures = {
                n: self.components[n].first_fit(data.X, data.targets[n], int_seed(seeds), pool)
                for n in new
            }
            fitted = {n: f.result() for n, f in futures.items()}
        for n in new:
            self.components[n].adopt(fitted[n], data.X, data.targets[n])
            notes.refit[n] = fit_summary(fitted[n])
            warn_if_bad(fitted[n].diagnostics, fitted[n].name)

    def update(self, data, t, rng, notes):
        notes.ess, notes.pareto_k = {}, {}
        s = self.settings.inference.fast_path
        seeds = as_generator(rng)
        self._first_fits(data, seeds, notes)
        for name, y in data.targets.items():
            fc = self.components[name]
            if fc.job is not None and (fc.job.consume_at <= t or fc.post is None):
                self._consume(fc, data.X, y, notes, t + REPAIR_LAGS * s.lag_at(data.n))
            fc.update(data.X, y)
        self._refit_collapsed(data, t, seeds, notes)
        self._launch_due(data, t, seeds)
        views = {}
        for name in data.targets:
            fc = self.components[name]
            notes.ess[name] = fc.post.ess
            notes.pareto_k[name] = fc.post.pareto_k
            view = FastWarpedGPView if isinstance(fc.gp, WarpedGP) else FastGPView
            views[name] = view(fc, self.index, rng)
        return views

    def _consume(self, fc: FastComponent, X, y, notes, repair_at: int | None = None) -> None:
        """Use the refit in flight; one whose weights failed their checks leaves the
        draws as they are and, with ``repair_at``, starts NUTS on ``(X, y)``
        consumed then (module docstring)."""
        status(f"waiting for the refit of {fc.gp.name}")
        job, fitted = fc.job, fc.job.future.result()
        fc.job = None
        if fitted.diagnostics.kept:
            notes.refit[fc.gp.name] = fit_summary(fc.gp, diagnostics=fitted.diagnostics)
            if repair_at is not None:
                seed = int_seed(as_generator(job.seed))
                fc.launch(X, y, seed, repair_at, _pool(), repair=True)
            return
        fc.adopt(fitted, X, y)
        notes.refit[fc.gp.name] = fit_summary(fitted)
        warn_if_bad(fitted.diagnostics, fitted.name)

    def _refit_collapsed(self, data, t: int, seeds, notes) -> None:
        """Replace collapsed draws before they are used: by the refit in flight,
        else (or if its draws collapse too) by a refit on all ``data`` made now."""
        # adopting a refit appends every observation since its start (FastComponent.adopt)
        collapsed = [fc for fc in self.components.values() if fc.collapsed]
        for fc in collapsed:  # queued before any new refit on the one thread
            if fc.job is not None:
                self._consume(fc, data.X, data.targets[fc.gp.name], notes)
        collapsed = [fc for fc in collapsed if fc.collapsed]
        for fc in collapsed:
            fc.launch(data.X, data.targets[fc.gp.name], int_seed(seeds), t, _pool())
        for fc in collapsed:
            self._consume(fc, data.X, data.targets[fc.gp.name], notes, repair_at=t)
        for fc in collapsed:  # a refit on many points that failed: NUTS, waited for
            if fc.job is not None:
                self._consume(fc, data.X, data.targets[fc.gp.name], notes)

    def _launch_due(self, data, t: int, seeds) -> None:
        """Start refits of degraded GPs, lowest ESS first, ``max_in_flight`` at most."""
        s = self.settings.inference.fast_path
        busy = sum(fc.job is not None for fc in self.components.values())
        due = [
            (fc.post.ess, name)
            for name, fc in self.components.items()
            if fc.job is None and fc.needs_refit(data.n)
        ]
        for _, name in sorted(due)[: max(s.max_in_flight - busy, 0)]:
            fc = self.components[name]
            fc.launch(data.X, data.targets[name], int_seed(seeds), t + s.lag_at(data.n), _pool())

    def state(self) -> dict:
        out = {}
        for name, fc in self.components.items():
            out[name] = {
                "job": None if fc.job is None else fc.job.state(),
                "prior_proposal": fc.prior_proposal,
                "ess_per_draw": fc.ess_per_draw,
                "refreshes": fc.refreshes,
            }
            if fc.post is not None:  # else only a first fit is in flight
                out[name].update(
                    draws=fc.gp.draws.as_dict(),
                    y_mean=fc.gp.y_mean,
                    y_std=fc.gp.y_std,
                    n_at_refit=fc.n_at_refit,
                    n_conditioned=len(fc.post.X),
                )
        return out

    def restore(self, state, data) -> None:
        for name, f in state.items():
            fc, y = self._component(name), data.targets[name]
            fc.prior_proposal = f.get("prior_proposal", False)  # runs before it: NUTS only
            fc.ess_per_draw = f.get("ess_per_draw")  # and every fit of full size
            fc.refreshes = f.get("refreshes", 0)
            job = f.get("job")
            if "draws" in f:
                a, b = f["n_at_refit"], f["n_conditioned"]
                draws = fc.gp.draws_type.from_dict(f["draws"])
                fc.rebuild(data.X[:a], y[:a], draws, f["y_mean"], f["y_std"])
            if job is not None:  # the refit in flight, relaunched with its seed from
                n = job["start_n"]  # the weights it saw at its launch
                if fc.post is not None:
                    fc.update(data.X[:n], y[:n])
                repair = job.get("repair", False)
                fc.launch(data.X[:n], y[:n], job["seed"], job["consume_at"], _pool(), repair=repair)
            if "draws" in f:
                fc.update(data.X[:b], y[:b])  # the same appends, in the same order, as the run
