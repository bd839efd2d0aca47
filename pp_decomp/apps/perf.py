"""``pp-decomp perf``: speed and convergence of the full-Bayes loop against its references.

Three cases, each a run of ``steps`` evaluations on the same seed (the command
runs the first two unless ``--case`` names others):

* ``synthetic``: Wang's synthetic problem (J = 10 components, N = 1000 candidates), D-GPUCB;
* ``flu``: the flu SIR problem (J = 5 age groups, 5-D box with a budget constraint), D-GPUCB;
* ``alpine2-network``: BOFN's 6-node Alpine2 chain, ``network-ei`` (EI-FN) under full
  Bayes and MAP against BoTorch's EI-FN peer (``botorch-ei-fn``) when installed.

For each case: full Bayes on the fast path (the default for ``inference="nuts"``:
reweighted draws, background refits), MAP, MAP with correlated components
(``correlated=True``: one coregionalised GP of the J outputs), on flu ``d-gpucb-mc``
with the components on the log scale (:data:`LOG_SCALE`), independent,
coregionalised and with the copula, and, with the optional extra
``pp-decomp[compare]``, BoTorch's MAP composite loop (strategy ``botorch-composite``:
a ``ModelListGP`` of ``SingleTaskGP``, refit every step, MC UCB on ``g``). On the
synthetic case the straightforward full-Bayes path (NUTS for every component at
every step, no reuse) is timed at a few sizes ``T`` and the run extrapolated by
interpolating the step time linearly in ``T``.

Reported per run: wall time, final cumulative regret, ask latency (p50 / p95 /
max over the acquisition steps, the first ask apart, and the longest of the others
against ``2 × p50 + 1 s``: :func:`ask_latency`), and for NUTS the refits' convergence: the share
meeting :data:`pp_decomp.components.diagnostics.CONVERGENCE` on the first run and after
repair, and the fits made by importance sampling from the prior instead
(:mod:`pp_decomp.components.inference.importance`, each passing its own checks). Ratios
are taken within the one process run, and everything goes to a JSON file.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import time
import warnings

import numpy as np

import pp_decomp
from pp_decomp.components import Priors
from pp_decomp.components.gp.pymc_model import compiled_model
from pp_decomp.kernels import DEFAULT_KERNEL
from pp_decomp.loop import Optimizer
from pp_decomp.models import get_problem
from pp_decomp.peers import botorch_available
from pp_decomp.results import package_versions
from pp_decomp.validate import check_choice

CASES = {"synthetic": "d-gpucb", "flu": "d-gpucb", "alpine2-network": "network-ei"}
NETWORK_CASES = {"alpine2-network": "botorch-ei-fn"}  # a network case and its peer


def machine_info() -> dict:
    """Platform, CPU count, BLAS thread settings, package versions, and the code
    timed: where pp_decomp was imported from and that checkout's commit (``None``
    outside a git checkout), so a before/after pair shows which code each ran."""
    return {
        "platform": platform.platform(),
        "processor": platform.processor() or platform.machine(),
        "cpu_count": os.cpu_count(),
        "python": platform.python_version(),
        "blas_threads": {k: os.environ.get(k) for k in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")},
        "versions": package_versions(),
        "code": code_info(),
    }


def code_info() -> dict:
    """``{"path": pp_decomp's folder, "commit": its checkout's HEAD or None}``."""
    here = os.path.dirname(os.path.abspath(pp_decomp.__file__))
    try:
        out = subprocess.run(
            ["git", "-C", here, "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10
        )
        commit = out.stdout.strip() if out.returncode == 0 else None
    except (OSError, subprocess.TimeoutExpired):
        commit = None
    return {"path": here, "commit": commit}


def refit_convergence(ds) -> dict:
    """Refits of a run and the share meeting the thresholds, first run and after repair."""
    if "refit" not in ds or "rhat_max" not in ds:
        return {"refits": 0}
    refit = ds["refit"].values
    # a NUTS fit has an r-hat, or its chains were weighed (the results keep no r-hat
    # for weighted draws: diagnostics_summary)
    nuts = refit & (np.isfinite(ds["rhat_max"].values) | ds["reweighted"].values)
    n = int(nuts.sum())
    if n == 0:
        return {"refits": int(refit.sum())}
    converged, repairs = ds["converged"].values[nuts], ds["repairs"].values[nuts]
    # any other fit in a NUTS run is by importance sampling: from the prior, or (its
    # k̂ recorded) refreshing the previous draws; used only where it passed
    importance = refit & ~nuts
    refresh = importance & np.isfinite(ds["fit_pareto_k"].values)
    # chains weighed by importance sampling: their r-hat is the chains', not the draws'
    weighed = ds["reweighted"].values[nuts]
    rhat = ds["rhat_max"].values[nuts]
    return {
        "refits": n,
        "share_first_run": float(np.mean(converged & (repairs == 0) & ~weighed)),
        "share_after_repair": float(np.mean(converged)),
        "repairs": int(repairs.sum()),
        "reweighted": int(weighed.sum()),
        "rhat_max": _max(rhat[~weighed]),
        "rhat_max_reweighted": _max(rhat[weighed]),
        "pareto_k_max": _max(ds["fit_pareto_k"].values[nuts][weighed]),
        "ess_bulk_min": float(np.nanmin(ds["ess_bulk_min"].values[nuts])),
        "divergences": int(ds["divergences"].values.sum()),
        "importance_fits": int((importance & ~refresh).sum()),
        "importance_ess_min": float(
            np.min(ds["ess_bulk_min"].values[importance & ~refresh], initial=np.inf)
        ),
        "refreshes": int(refresh.sum()),
        "refresh_pareto_k_max": _max(ds["fit_pareto_k"].values[refresh]),
        "refresh_ess_min": float(np.min(ds["ess_bulk_min"].values[refresh], initial=np.inf)),
        "share_all_fits": float((converged.sum() + importance.sum()) / (n + importance.sum())),
    }


def ask_latency(ds) -> dict:
    """The acquisition steps' ask seconds: p50, p95 and max over all; the first
    (it makes every GP's first fit); the longest of the rest, its iteration, and
    the line ``2 × p50 + 1`` it is judged against (an ask that waited on a refit
    shows over it)."""
    steps = np.flatnonzero(ds["phase"].values == "acquisition")
    ask = ds["ask_seconds"].values[steps]
    p50, p95 = np.percentile(ask, [50, 95])
    out = {"p50": float(p50), "p95": float(p95), "max": float(ask.max()), "first": float(ask[0])}
    if len(ask) > 1:
        k = int(np.argmax(ask[1:])) + 1
        out.update(next_max=float(ask[k]), next_max_iteration=int(ds["iteration"].values[steps[k]]))
    out["line"] = 2.0 * out["p50"] + 1.0
    return out


def _max(a) -> float:
    return float(np.max(a)) if len(a) else float("nan")


def loop_run(
    case: str,
    strategy: str,
    inference: str,
    steps: int,
    seed: int = 0,
    correlated: bool = False,
    **settings,
) -> dict:
    """One run of ``steps`` evaluations: wall time (the optimiser's construction
    included: what it imports or compiles there is the run's cost too), regret, ask
    latency, refit convergence (``settings``: further :class:`~pp_decomp.Optimizer`
    arguments, stored with the run)."""
    problem = get_problem(case, seed=seed)
    start = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        opt = Optimizer(
            problem, strategy, inference=inference, seed=seed, correlated=correlated, **settings
        )
        ds = opt.run(steps)
    wall = time.perf_counter() - start
    return {
        "case": case,
        "strategy": strategy,
        "inference": inference,
        "fast": bool(opt.settings.inference.fast),
        "correlated": bool(correlated),
        "settings": {k: str(v) for k, v in settings.items()},
        "steps": steps,
        "seconds": wall,
        "cumulative_regret": float(ds["cumulative_regret"][-1]),
        "ask_seconds": ask_latency(ds),
        "warnings": sorted({f"{w.category.__name__}: {str(w.message)[:160]}" for w in caught}),
        **refit_convergence(ds),
    }


def straightforward_step(T: int, seed: int = 0) -> dict:
    """Wall time of one straightforward full-Bayes step at ``T`` observations.

    A fresh converged NUTS fit of every component, then the D-GPUCB acquisition
    over all candidates: what every step costs without reuse.
    """
    problem = get_problem("synthetic", seed=seed)
    opt = Optimizer(problem, "d-gpucb", inference="nuts", fast=False, seed=seed, n_init=2)
    X = problem.domain.sample(T, seed=seed)
    for x, y in zip(X, problem.evaluate(X, seed=seed), strict=True):
        opt.tell(x, y)
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        opt.ask()
    return {"T": T, "seconds": time.perf_counter() - start}


def _variant(r: dict) -> str:
    """`` (corr.)`` or `` (copula)`` after the strategy's name, where it applies."""
    if r.get("correlated"):
        return " (corr.)"
    return " (copula)" if r.get("settings", {}).get("copula") == "True" else ""


def _describe(r: dict) -> str:
    a = r["ask_seconds"]
    text = (
        f"{r['strategy'] + _variant(r):<20} "
        f"{r['inference']:<5} {r['seconds']:7.1f} s  "
        f"regret {r['cumulative_regret']:8.2f}  ask p50/p95/max "
        f"{a['p50']:.2f}/{a['p95']:.2f}/{a['max']:.2f} s"
    )
    if "next_max" in a:
        text += (
            f" (first {a['first']:.2f} s, longest next {a['next_max']:.2f} s at iteration "
            f"{a['next_max_iteration']}; 2 × p50 + 1 = {a['line']:.2f} s)"
        )
    if r.get("refits") and "share_after_repair" in r:
        text += (
            f"  {r['refits']} NUTS refits: {100 * r['share_first_run']:.1f}% converged first, "
            f"{100 * r['share_after_repair']:.1f}% after repair "
            f"({r.get('reweighted', 0)} by weighing their chains, worst k̂ "
            f"{r.get('pareto_k_max', float('nan')):.2f}); "
            f"{r['importance_fits']} fits by importance sampling from the prior, "
            f"{r.get('refreshes', 0)} refreshing the previous draws (worst k̂ "
            f"{r.get('refresh_pareto_k_max', float('nan')):.2f}); "
            f"{100 * r.get('share_all_fits', float('nan')):.1f}% of all fits pass"
        )
    return text


# flu's calibrated configuration (docs/results.md, "Components on the log scale")
LOG_SCALE = {"outcome_transform": "log", "kernel": "matern32"}


def _log_scale_runs(out: dict, steps: int, log) -> None:
    """Flu's components on the log scale (``d-gpucb-mc``): independent, coregionalised
    and correlated by the copula."""
    kw = dict(LOG_SCALE, priors=Priors(ls_family="inverse-gamma"))
    runs = {"map_log": {}, "map_log_correlated": {"correlated": True}}
    runs["map_log_copula"] = {"copula": True}
    for key, extra in runs.items():
        out[key] = loop_run("flu", "d-gpucb-mc", "map", steps, **kw, **extra)
        log(f"[flu] log scale {_describe(out[key])}")
    base = out["map_log"]["seconds"]
    out["ratio_log_vs_map"] = base / out["map"]["seconds"]
    out["ratio_log_correlated_vs_log"] = out["map_log_correlated"]["seconds"] / base
    out["ratio_log_copula_vs_log"] = out["map_log_copula"]["seconds"] / base
    log(
        f"[flu] wall-time ratios: log scale / MAP {out['ratio_log_vs_map']:.2f}, "
        f"log scale correlated / log scale {out['ratio_log_correlated_vs_log']:.2f}, "
        f"log scale copula / log scale {out['ratio_log_copula_vs_log']:.2f}"
    )


def network_case(case: str, steps: int, log=print) -> dict:
    """A function network: full Bayes (a NUTS fit per node and step: the network
    strategies have no fast path), MAP and, when installed, BoTorch's EI-FN."""
    strategy = CASES[case]
    out = {}
    for name, inference in (("bayes", "nuts"), ("map", "map")):
        out[name] = loop_run(case, strategy, inference, steps)
        log(f"[{case}] {_describe(out[name])}")
    out["ratio_bayes_vs_map"] = out["bayes"]["seconds"] / out["map"]["seconds"]
    line = f"[{case}] wall-time ratios: full Bayes / MAP {out['ratio_bayes_vs_map']:.2f}"
    if botorch_available():
        out["botorch"] = loop_run(case, NETWORK_CASES[case], "map", steps)
        log(f"[{case}] {_describe(out['botorch'])}")
        out["ratio_bayes_vs_botorch"] = out["bayes"]["seconds"] / out["botorch"]["seconds"]
        out["ratio_map_vs_botorch"] = out["map"]["seconds"] / out["botorch"]["seconds"]
        line += (
            f", full Bayes / BoTorch EI-FN {out['ratio_bayes_vs_botorch']:.2f}, "
            f"MAP / BoTorch EI-FN {out['ratio_map_vs_botorch']:.2f}"
        )
    log(line)
    return out


def run_case(case: str, steps: int, log=print) -> dict:
    """Full Bayes (fast path), MAP and, when installed, BoTorch's MAP composite loop."""
    if case in NETWORK_CASES:
        return network_case(case, steps, log)
    strategy = CASES[case]
    out = {"bayes": loop_run(case, strategy, "nuts", steps)}
    log(f"[{case}] {_describe(out['bayes'])}")
    out["map"] = loop_run(case, strategy, "map", steps)
    log(f"[{case}] {_describe(out['map'])}")
    out["ratio_bayes_vs_map"] = out["bayes"]["seconds"] / out["map"]["seconds"]
    out["map_correlated"] = loop_run(case, strategy, "map", steps, correlated=True)
    log(f"[{case}] {_describe(out['map_correlated'])}")
    out["ratio_correlated_vs_map"] = out["map_correlated"]["seconds"] / out["map"]["seconds"]
    if case == "flu":
        _log_scale_runs(out, steps, log)
    if botorch_available():
        out["botorch"] = loop_run(case, "botorch-composite", "map", steps)
        log(f"[{case}] {_describe(out['botorch'])}")
        out["ratio_bayes_vs_botorch"] = out["bayes"]["seconds"] / out["botorch"]["seconds"]
        out["ratio_map_vs_botorch"] = out["map"]["seconds"] / out["botorch"]["seconds"]
    else:
        log(f"[{case}] BoTorch not installed (pip install 'pp-decomp[compare]'): peer skipped")
    log(
        f"[{case}] wall-time ratios: full Bayes / MAP {out['ratio_bayes_vs_map']:.2f}, "
        f"MAP correlated / MAP {out['ratio_correlated_vs_map']:.2f}"
        + (
            f", full Bayes / BoTorch {out['ratio_bayes_vs_botorch']:.2f}, "
            f"MAP / BoTorch {out['ratio_map_vs_botorch']:.2f}"
            if "botorch" in out
            else ""
        )
    )
    return out


def straightforward(steps: int, quick: bool, log=print) -> dict:
    """The straightforward path's step time at a few ``T``, extrapolated to the run."""
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
        "[synthetic] straightforward full Bayes (NUTS every step, no reuse): "
        + ", ".join(f"{s:.1f} s/step at T={T:.0f}" for T, s in zip(Ts, secs, strict=True))
        + f"; ~{naive['extrapolated_seconds']:.0f} s for {steps} steps (extrapolated)"
    )
    return naive


def _gp_dims(problem) -> set[int]:
    """The input dimensions of a problem's GPs: its own, or its network nodes'."""
    net = problem.metadata.get("network")
    return {problem.dim} if net is None else {node.width for node in net.nodes}


def run_perf(quick: bool = False, out=None, log=print, cases=("synthetic", "flu")) -> dict:
    """All measurements; ``quick`` runs 30 steps instead of 100."""
    for case in cases:
        check_choice(case, "cases", tuple(CASES))
    steps = 30 if quick else 100
    report = {"machine": machine_info(), "quick": quick, "steps": steps}
    start = time.perf_counter()
    for dim in sorted({dim for case in cases for dim in _gp_dims(get_problem(case))}):
        # once per process and structure, not inside a timed run
        _ = compiled_model(DEFAULT_KERNEL, dim, Priors()).nutpie_model
    report["compile_seconds"] = time.perf_counter() - start
    log(f"nutpie models compiled once in {report['compile_seconds']:.1f} s")
    for case in cases:
        report[case] = run_case(case, steps, log)
    if "synthetic" in cases:
        naive = straightforward(steps, quick, log)
        report["synthetic"]["straightforward"] = naive
        ratio = report["synthetic"]["bayes"]["seconds"] / naive["extrapolated_seconds"]
        report["synthetic"]["ratio_bayes_vs_straightforward"] = ratio
        log(f"[synthetic] ratio full Bayes (fast path) / straightforward: {ratio:.3f}")
    if out is not None:
        with open(out, "w") as fh:
            json.dump(report, fh, indent=1)
    return report
