"""How full Bayes, MAP and BoTorch's composite loop scale with the data brought in.

Usage: python benchmarks/speed/scale.py [--T 100,300] [--J 3] [--inference nuts,map]
       [--next 3] [--peer] [--rows] [--held-mib 128] [--fast max_age=10,...] [--timeout 900]
       [--out docs/results/perf/scale.json]

The problem: a 4-D box, ``J`` smooth components ``f_j(x) = sin(w_j·x) + 0.3
cos(2 w'_j·x)`` with noise sd 0.05, and ``g = -Σ_j F_j²`` (nonlinear, so the
default strategy is ``d-gpucb-mc-min``). ``T`` evaluations are told in one call
(``opt.tell(X, Y)``; ``--rows``: one ``tell`` per row, for code that predates
it), then the first ask is timed (the first fits on ``T``
points), then ``--next`` more asks, each after telling the last input's
result. Each configuration runs in a process of its own, so its peak resident
memory (``ru_maxrss``) is its own. After the asks, the coverage of the 95%
central intervals of every component's posterior (``opt.predict``) against the
noise-free truth at 200 uniform inputs (an approximation that is fast but wrong
shows here). ``--peer`` adds ``botorch-composite`` (MAP) when BoTorch is
installed. ``--held-mib``: the fast path's memory budget per GP for its draws'
factors (``FastSettings.held_bytes``, default 128 MiB; 1024 keeps all 128
draws at ``T = 1000``). ``--fast``: other ``FastSettings`` fields, e.g.
``max_age=10`` to refit every GP's draws 10 observations old, so that
``--next`` asks meet the refits a long run meets (``max_refreshes=0``: each
one where a refresh would not do). With more than one next ask the line says
whether any waited on a refit: the longest next ask against ``2 × median +
1 s``, and the refits consumed (``fit_draws`` counts, the longest fit).

Prints one line per configuration; ``--out`` writes them as JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")


def problem(J: int, seed: int = 0):
    """The benchmark's problem with ``J`` components (module docstring)."""
    import numpy as np

    import pp_decomp as ppd

    W = np.random.default_rng(seed).normal(size=(J, 4)) * 2

    def components(X):
        return np.sin(X @ W.T) + 0.3 * np.cos(2 * X @ W[::-1].T)

    return ppd.Problem(
        domain=ppd.Box(np.zeros(4), np.ones(4)),
        components=components,
        n_components=J,
        g=lambda F, X: -np.sum(F**2, axis=-1),
        noise_sd=0.05,
        name=f"scale-J{J}",
    )


def one(
    T: int,
    J: int,
    inference: str,
    strategy: str | None,
    n_next: int,
    seed: int,
    rows=False,
    held_mib: int | None = None,
    fast: dict | None = None,
) -> dict:
    """Time one configuration in this process (module docstring); ``rows``: tell the
    data one row at a time (as code before ``tell(X, Y)`` must); ``held_mib``: the
    fast path's ``held_bytes`` in MiB (default: its own); ``fast``: its other
    settings."""
    import resource
    import time
    import warnings

    import numpy as np

    import pp_decomp as ppd
    from pp_decomp.loop import FastSettings

    warnings.simplefilter("ignore")  # a fit's diagnostics are in the results
    p = problem(J, seed)
    rng = np.random.default_rng(seed + 1)
    X = p.domain.sample(T, seed=rng)
    kw, fast = {}, dict(fast or {})
    if held_mib is not None:
        fast["held_bytes"] = held_mib * 2**20
    if fast and inference == "nuts":
        kw["fast_settings"] = FastSettings(**fast)
    opt = ppd.Optimizer(p, strategy, inference=inference, seed=seed, **kw)
    Y = p.evaluate(X, seed=rng)
    if rows:
        for x, y in zip(X, Y, strict=True):
            opt.tell(x, y)
    else:
        opt.tell(X, Y)
    start = time.perf_counter()
    x = opt.ask()
    first = time.perf_counter() - start
    nxt = []
    for _ in range(n_next):
        opt.tell(x, p.evaluate(x[None], seed=rng)[0])
        start = time.perf_counter()
        x = opt.ask()
        nxt.append(time.perf_counter() - start)
    coverage = np.nan
    if strategy is None or strategy.startswith("d-"):
        X_test = p.domain.sample(200, seed=np.random.default_rng(seed + 2))
        post = opt.predict(X_test, quantiles=(0.025, 0.975), n_samples=200)
        q = post["component_quantile"].values  # (2, m, J)
        F = p.components(X_test)
        coverage = float(np.mean((q[0] <= F) & (F <= q[1])))
    return {
        "T": T,
        "J": J,
        "inference": inference,
        "strategy": opt.settings.strategy,
        "first_ask_s": first,
        "next_ask_s": nxt,
        "next_ask_median_s": float(np.median(nxt)) if nxt else np.nan,
        "next_ask_max_s": float(np.max(nxt)) if nxt else np.nan,
        "refits": refits(opt.results(), T),
        "peak_gb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20,
        "coverage_95": coverage,
        "code": ppd.__file__,  # which checkout ran (a before/after pair shows it)
        "kept_draws": {  # on the fast path: the draws each GP holds at the end
            n: len(fc.post.logw) for n, fc in getattr(opt.updater, "components", {}).items()
        },
    }


def refits(ds, T: int) -> dict:
    """The refits consumed after the first ask: how many of each ``fit_draws`` kind,
    and the longest fit in seconds (0 and NaN where none)."""
    import numpy as np

    if "fit_draws" not in ds:  # a peer's results
        return {}
    kinds = ds["fit_draws"].values[T + 1 :].ravel()
    kinds = kinds[kinds != ""]
    seconds = ds["refit_seconds"].values[T + 1 :].ravel()
    out = {str(k): int((kinds == k).sum()) for k in np.unique(kinds)}
    out["longest_s"] = float(np.nanmax(seconds)) if np.isfinite(seconds).any() else np.nan
    return out


def line(r: dict) -> str:
    if "error" in r:
        return f"T={r['T']:5d} J={r['J']:2d} {r['label']:<18} {r['error']}"
    out = (
        f"T={r['T']:5d} J={r['J']:2d} {r['label']:<18} first ask {r['first_ask_s']:7.1f} s, "
        f"next ask median {r['next_ask_median_s']:6.2f} s, peak {r['peak_gb']:5.2f} GB, "
        f"95% coverage {r['coverage_95']:.3f}"
    )
    if len(r["next_ask_s"]) > 1:
        bound = 2 * r["next_ask_median_s"] + 1
        out += f", longest next ask {r['next_ask_max_s']:.2f} s (2x median + 1 s: {bound:.2f})"
    if r.get("refits"):
        out += ", refits " + " ".join(f"{k}={v:g}" for k, v in r["refits"].items())
    return out


def run(
    Ts,
    Js,
    inferences,
    n_next,
    peer,
    timeout,
    seed=0,
    log=print,
    rows=False,
    held_mib=None,
    fast=None,
) -> list[dict]:
    """Every configuration in a subprocess of its own; the records, in order."""
    configs = [(T, J, inf, None) for J in Js for T in Ts for inf in inferences]
    if peer:
        configs += [(T, J, "map", "botorch-composite") for J in Js for T in Ts]
    import pp_decomp

    # the child imports this process's pp_decomp, whatever its PYTHONPATH says: a
    # relative entry (``PYTHONPATH=.`` in a worktree) would resolve in ``here``
    root = os.path.dirname(os.path.dirname(os.path.abspath(pp_decomp.__file__)))
    here = os.path.dirname(os.path.abspath(__file__))
    out = []
    for T, J, inf, strategy in configs:
        label = strategy or ("full Bayes" if inf == "nuts" else "MAP")
        args = f"{T}, {J}, {inf!r}, {strategy!r}, {n_next}, {seed}, {rows}, {held_mib}, {fast!r}"
        call = f"scale.one({args})"
        code = f"import json, sys; sys.path[:0] = [{root!r}, {here!r}]; import scale; "
        code += f"print(json.dumps({call}))"
        try:
            # from this folder: ``-c`` puts the working directory first on sys.path,
            # where a checkout's own pp_decomp would shadow PYTHONPATH's
            proc = subprocess.run(
                [sys.executable, "-c", code],
                capture_output=True,
                text=True,
                timeout=timeout,
                cwd=here,
            )
            if proc.returncode:
                raise RuntimeError(proc.stderr.strip().splitlines()[-1])
            r = json.loads(proc.stdout.strip().splitlines()[-1])
        except subprocess.TimeoutExpired:
            r = {"T": T, "J": J, "error": f"over {timeout} s: stopped"}
        except RuntimeError as err:
            r = {"T": T, "J": J, "error": str(err)}
        r["label"] = label
        log(line(r))
        out.append(r)
    return out


def fast_settings(text: str) -> dict:
    """``"max_age=10,max_refreshes=0"`` as ``FastSettings`` keywords (numbers parsed)."""
    from pp_decomp.loop import FastSettings

    out = {}
    for item in filter(None, text.split(",")):
        key, _, value = item.partition("=")
        if key not in FastSettings.__dataclass_fields__ or not value:
            raise ValueError(f"--fast: {item!r} is not FIELD=VALUE of a FastSettings field")
        out[key] = float(value) if "." in value or "e" in value else int(value)
    return out


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--T", default="100,300", help="data sizes, comma-separated")
    ap.add_argument("--J", default="3", help="numbers of components, comma-separated")
    ap.add_argument("--inference", default="nuts,map")
    ap.add_argument("--next", type=int, default=3, help="asks timed after the first")
    ap.add_argument("--peer", action="store_true", help="add BoTorch's composite loop")
    ap.add_argument("--timeout", type=float, default=900, help="seconds per configuration")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--rows", action="store_true", help="tell the data one row at a time")
    ap.add_argument("--held-mib", type=int, help="fast path's draw budget per GP, MiB")
    ap.add_argument("--fast", default="", help="FastSettings fields, e.g. max_age=10")
    ap.add_argument("--out")
    a = ap.parse_args(argv)
    if a.peer:
        try:
            import botorch  # noqa: F401
        except ImportError:
            print("BoTorch not installed (pip install 'pp-decomp[compare]'): peer skipped")
            a.peer = False
    ints = lambda s: [int(v) for v in s.split(",")]  # noqa: E731
    res = run(
        ints(a.T),
        ints(a.J),
        a.inference.split(","),
        a.next,
        a.peer,
        a.timeout,
        a.seed,
        rows=a.rows,
        held_mib=a.held_mib,
        fast=fast_settings(a.fast),
    )
    if a.out:
        os.makedirs(os.path.dirname(a.out) or ".", exist_ok=True)
        with open(a.out, "w") as fh:
            json.dump(res, fh, indent=1)


if __name__ == "__main__":
    main()
