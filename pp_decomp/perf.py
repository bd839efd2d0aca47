"""``pp-decomp perf``: speed of the full-Bayes loop against its references, in one run.

Measures, on Wang's synthetic problem (J = 10 components, N = 1000 candidates):

* ask latency with the fast path at T = 20, 50, 100 observations, with S = 256
  hyperparameter draws per component (2 chains x 128), refit included (NUTS for
  all J components) and refit excluded (an incremental update);
* wall time of a 100-step D-GPUCB run with full Bayes (``fast=True``) and with MAP;
* the straightforward full-Bayes path (NUTS 2 x 500/500 for every component at
  every step, no reuse): one step timed at a few sizes ``T`` and the 100-step
  run extrapolated by interpolating the step time linearly in ``T`` (a step's
  cost grows with ``T``, so timing only the first steps would understate it);
* with the optional extra ``pp-decomp[compare]``, a BoTorch loop on the same
  problem (``ModelListGP`` of J ``SingleTaskGP`` refit by MAP each step, MC UCB
  on the summed objective) as the peer reference.

Ratios pp_decomp / reference are printed and everything goes to a JSON file.
"""

from __future__ import annotations

import json
import platform
import time
import warnings

import numpy as np

from pp_decomp.results import package_versions


def machine_info() -> dict:
    """Platform, CPU count, BLAS thread settings and package versions."""
    import os

    return {
        "platform": platform.platform(),
        "processor": platform.processor() or platform.machine(),
        "cpu_count": os.cpu_count(),
        "python": platform.python_version(),
        "blas_threads": {k: os.environ.get(k) for k in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")},
        "versions": package_versions(),
    }


def _problem(seed=0):
    from pp_decomp.models import get_problem

    return get_problem("synthetic", seed=seed)


def _told(T: int, fast: bool, seed: int, n_points: int):
    """A full-Bayes D-GPUCB optimiser told the first ``T`` of ``n_points`` random inputs."""
    from pp_decomp.loop import Optimizer

    problem = _problem(seed)
    opt = Optimizer(problem, "d-gpucb", inference="nuts", fast=fast, seed=seed, n_init=2)
    X = problem.domain.sample(n_points, seed=seed)
    for x in X[:T]:
        opt.tell(x, problem.evaluate(x[None], seed=seed)[0])
    return problem, opt, X


def ask_latency(T: int, seed: int = 0) -> dict:
    """Fast-path ask latency with ``T`` observations: refit included and excluded."""

    problem, opt, X = _told(T, fast=True, seed=seed, n_points=T + 1)
    start = time.perf_counter()
    opt.ask()  # first ask: NUTS refit of every component, then the acquisition
    with_refit = time.perf_counter() - start
    opt.tell(X[T], problem.evaluate(X[T][None], seed=seed)[0])
    start = time.perf_counter()
    opt.ask()  # incremental update and reweighting, no refit
    without = time.perf_counter() - start
    comps = opt.updater.components.values()
    ess = min(fc.post.ess for fc in comps)
    S = min(len(fc.post.logw) for fc in comps)
    return {
        "T": T,
        "J": problem.n_components,
        "N": problem.domain.size,
        "S": S,
        "ask_seconds_refit_included": with_refit,
        "ask_seconds_refit_excluded": without,
        "ess_min_after_update": ess,
    }


def loop_time(inference: str, fast: bool, steps: int, seed: int = 0, **kw) -> dict:
    """Wall time of a D-GPUCB run of ``steps`` evaluations."""
    from pp_decomp.loop import Optimizer

    problem = _problem(seed)
    start = time.perf_counter()
    ds = Optimizer(problem, "d-gpucb", inference=inference, fast=fast, seed=seed, **kw).run(steps)
    wall = time.perf_counter() - start
    ask = ds["ask_seconds"].values[ds["phase"].values == "acquisition"]
    out = {
        "inference": inference,
        "fast": fast,
        "steps": steps,
        "seconds": wall,
        "cumulative_regret": float(ds["cumulative_regret"][-1]),
        # per-step ask latency over the run, refits included where they happened
        "ask_seconds_median": float(np.median(ask)),
        "ask_seconds_max": float(np.max(ask)),
    }
    if "ess" in ds:
        out["ess_min"] = float(np.nanmin(ds["ess"].values))
        out["refits"] = int(np.isfinite(ds["rhat_max"].values).sum())
        out["rhat_max"] = float(np.nanmax(ds["rhat_max"].values))
        out["divergences"] = int(np.nansum(ds["divergences"].values))
    return out


def straightforward_step(T: int, seed: int = 0) -> dict:
    """Wall time of one straightforward full-Bayes step at ``T`` observations.

    A fresh NUTS fit (2 chains x 500/500) of every component, then the D-GPUCB
    acquisition over all candidates: what every step costs without reuse.
    """

    _, opt, _ = _told(T, fast=False, seed=seed, n_points=T)
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        opt.ask()
    return {"T": T, "seconds": time.perf_counter() - start}


def botorch_loop(steps: int, seed: int = 0, n_init: int = 5) -> dict | None:
    """The BoTorch peer loop, or ``None`` when ``pp-decomp[compare]`` is not installed."""
    try:
        import torch
        from botorch.acquisition import qUpperConfidenceBound
        from botorch.acquisition.objective import GenericMCObjective
        from botorch.fit import fit_gpytorch_mll
        from botorch.models import ModelListGP, SingleTaskGP
        from gpytorch.mlls import SumMarginalLogLikelihood
    except ImportError:
        return None
    from pp_decomp.acquisition import BetaDiscrete

    torch.set_num_threads(1)
    problem = _problem(seed)
    Xc = torch.as_tensor(problem.domain.X, dtype=torch.float64)
    rng = np.random.default_rng(seed)
    X = problem.domain.sample(n_init, seed=rng)
    Y = problem.evaluate(X, seed=rng)
    beta = BetaDiscrete(problem.domain.size)
    start = time.perf_counter()
    for t in range(n_init + 1, steps + 1):
        tx, ty = torch.as_tensor(X), torch.as_tensor(Y)
        models = [SingleTaskGP(tx, ty[:, j : j + 1]) for j in range(problem.n_components)]
        model = ModelListGP(*models)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fit_gpytorch_mll(SumMarginalLogLikelihood(model.likelihood, model))
        acq = qUpperConfidenceBound(
            model, beta=float(beta(t)), objective=GenericMCObjective(lambda Z, X=None: Z.sum(-1))
        )
        with torch.no_grad():
            vals = acq(Xc[:, None, :])
        x = problem.domain.X[int(torch.argmax(vals))]
        X = np.vstack([X, x])
        Y = np.vstack([Y, problem.evaluate(x[None], seed=rng)])
    wall = time.perf_counter() - start
    f = problem.objective(X)
    return {
        "steps": steps,
        "seconds": wall,
        "cumulative_regret": float(np.sum(problem.optimum - f)),
        "versions": {"torch": torch.__version__, "botorch": __import__("botorch").__version__},
    }


def run_perf(quick: bool = False, out=None, log=print) -> dict:
    """All measurements; ``quick`` shrinks every size to finish in a few minutes."""
    steps = 30 if quick else 100
    report = {"machine": machine_info(), "quick": quick}
    from pp_decomp.components import Priors
    from pp_decomp.components.model import compiled_model

    start = time.perf_counter()
    _ = compiled_model("se", 1, Priors()).nutpie_model  # once per process, not per step
    report["compile_seconds"] = time.perf_counter() - start
    log(f"nutpie model compiled once in {report['compile_seconds']:.1f} s")
    report["ask_latency"] = [ask_latency(T) for T in ((20, 50) if quick else (20, 50, 100))]
    for r in report["ask_latency"]:
        log(
            f"ask latency T={r['T']} J={r['J']} N={r['N']} S={r['S']}: "
            f"{r['ask_seconds_refit_excluded']:.2f} s without refit, "
            f"{r['ask_seconds_refit_included']:.2f} s with refit"
        )
    fast = loop_time("nuts", True, steps)
    log(
        f"{steps}-step full-Bayes D-GPUCB (fast path): {fast['seconds']:.1f} s "
        f"({fast['refits']} component refits, min ESS {fast['ess_min']:.0f}); ask latency "
        f"median {fast['ask_seconds_median']:.2f} s, max {fast['ask_seconds_max']:.1f} s"
    )
    map_run = loop_time("map", False, steps)
    log(f"{steps}-step MAP D-GPUCB: {map_run['seconds']:.1f} s")
    step_T = (10, 30) if quick else (10, 50, 100)
    naive_steps = [straightforward_step(T) for T in step_T]
    Ts = np.array([r["T"] for r in naive_steps], dtype=float)
    secs = np.array([r["seconds"] for r in naive_steps])
    t = np.arange(5, steps)  # observations before each acquisition step of the run
    naive = {
        "steps": naive_steps,
        "method": "step time interpolated linearly in T, summed over the run's steps",
        "extrapolated_seconds": float(np.interp(t, Ts, secs).sum()),
    }
    log(
        "straightforward full Bayes (NUTS every step, no reuse): "
        + ", ".join(f"{s:.1f} s/step at T={T:.0f}" for T, s in zip(Ts, secs, strict=True))
        + f"; ~{naive['extrapolated_seconds']:.0f} s for {steps} steps (extrapolated)"
    )
    report.update(fast=fast, map=map_run, straightforward=naive)
    report["ratio_fast_vs_straightforward"] = fast["seconds"] / naive["extrapolated_seconds"]
    log(f"ratio fast / straightforward: {report['ratio_fast_vs_straightforward']:.3f}")
    peer = botorch_loop(steps)
    report["botorch"] = peer
    if peer is None:
        log("BoTorch not installed (pip install 'pp-decomp[compare]'): peer comparison skipped")
    else:
        report["ratio_map_vs_botorch"] = map_run["seconds"] / peer["seconds"]
        report["ratio_fast_vs_botorch"] = fast["seconds"] / peer["seconds"]
        log(
            f"BoTorch MAP loop: {peer['seconds']:.1f} s; ratios MAP/BoTorch "
            f"{report['ratio_map_vs_botorch']:.2f}, full-Bayes/BoTorch "
            f"{report['ratio_fast_vs_botorch']:.2f}"
        )
    if out is not None:
        with open(out, "w") as fh:
            json.dump(report, fh, indent=1)
    return report
