"""Do prior-importance fits give component intervals as good as NUTS's at equal data?

For each of ``--reps`` datasets a true function is drawn from the default component
model's prior (``ComponentGP`` on ``[0, 1]^2``: Matérn 3/2, its default priors;
the hyperparameters, noise included, drawn with ``sample_prior``, the function
sampled jointly at the ``n`` training and ``--m`` test inputs, the noise added to
the training outputs). At each ``n`` of ``--n`` the same data are fitted twice:

* by importance sampling from the prior as the loop's first fits are
  (:func:`~pp_decomp.components.inference.importance.prior_importance_fit`:
  ``--prior-draws`` draws, 128 kept, ``k̂ ≤ 0.7``); its weights' ESS and ``k̂`` and
  whether it passed are recorded. A fit that fails is redone without the checks
  (the same draws' weights computed in full, 128 resampled) so that its intervals
  are scored too, in the bin "failed". A second arm does the same with
  ``--small-draws`` prior draws, whose ESS falls in the bins of interest (128-400)
  on the larger ``n``: the prior's draws far outnumber the posterior's effective
  ones on these data, so the loop's 32768 rarely give an ESS below 400;
* by NUTS (``gp.fit(X, y, "nuts", seed=s)``, the default settings and repairs);
  whether it converged is recorded.

Each fit's central intervals of the noise-free ``f`` at the test points are the
quantiles of its Gaussian mixture over the draws
(:func:`pp_decomp.components.posterior.batched.mixture_quantiles`), at 0.5, 0.9 and 0.95, and
their coverage is the share of the ``m`` test points whose true ``f`` they hold.
The truth is drawn from the model's own prior, so exact Bayesian intervals cover
at the nominal level on average over datasets. Prints one line per dataset and
``n``, then per ``n`` and arm the mean coverage ± SE over the datasets whose
importance fit passed, the NUTS fits' on the same datasets and the paired
difference importance − NUTS ± SE; the importance fits of both arms and every
``n``, binned by ESS (those that passed) or failed, against the NUTS fits of the
same data; and a verdict line: the passed fits of the loop's ``M`` and the ESS
bins 128-200 and 200-400 within 2 SE of NUTS at 0.95, or not::

    python benchmarks/studies/importance_coverage.py --reps 80 --out FILE.json
"""

from __future__ import annotations

import os

for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402

LEVELS = (0.5, 0.9, 0.95)
N_KEEP = 128  # the draws a first fit keeps (FastSettings.kept_draws)
K_MAX = 0.7
BINS = ((128.0, 200.0, "ESS 128-200"), (200.0, 400.0, "ESS 200-400"))
BINS += ((400.0, np.inf, "ESS >= 400"),)  # of the fits that passed; the rest "failed"
D = 2


def coverage(gp, Xt: np.ndarray, f: np.ndarray) -> dict:
    """Coverage of ``f (m,)`` by ``gp``'s central mixture intervals at ``LEVELS``, and
    the mean width of the last level's."""
    from pp_decomp.components.posterior.batched import mixture_quantiles

    mean_s, var_s = gp.predict_per_draw(Xt)
    q = np.array([(1 - v) / 2 for v in LEVELS] + [(1 + v) / 2 for v in LEVELS])
    qs = mixture_quantiles(mean_s, np.sqrt(var_s), q)
    lo, hi = qs[: len(LEVELS)], qs[len(LEVELS) :]
    cover = [float(v) for v in ((lo <= f) & (f <= hi)).mean(axis=1)]
    return {"cover": cover, "width": float((hi - lo)[-1].mean())}


def dataset(rep: int, n: int, m: int, seed: int):
    """One dataset: ``(X (n, d), y (n,), Xt (m, d), f_test (m,), truth's hyperparameters)``."""
    import pp_decomp as ppd

    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(rep, n)))
    truth = ppd.ComponentGP(bounds=np.array([[0.0] * D, [1.0] * D]), standardize=False)
    truth.input_dim = D
    truth._resolve_priors()
    theta = truth.sample_prior(1, rng)
    truth.condition(np.empty((0, D)), np.empty(0), theta)  # the prior, f in original units
    X, Xt = rng.uniform(size=(n, D)), rng.uniform(size=(m, D))
    f = truth.sample(np.vstack([X, Xt]), 1, seed=rng, joint=True)[0]
    sigma = float(theta.sigma[0])
    y = f[:n] + sigma * rng.standard_normal(n)
    hyper = {"ls": theta.ls[0].tolist(), "eta": float(theta.eta[0]), "sigma": sigma}
    return X, y, Xt, f[n:], hyper


def importance(X, y, Xt, f, n_prior: int, rng) -> dict:
    """The prior-importance fit of ``(X, y)``; a failed one redone without its checks."""
    import pp_decomp as ppd
    from pp_decomp.components.inference.importance import prior_importance_fit, prior_log_weights
    from pp_decomp.components.posterior.incremental import ess, pareto_k, resample

    bounds = np.array([[0.0] * D, [1.0] * D])
    gp = ppd.ComponentGP(bounds=bounds)
    passed = prior_importance_fit(gp, X, y, n_prior, N_KEEP, K_MAX, rng)
    if passed:
        e, k = gp.diagnostics.ess_bulk_min, gp.diagnostics.pareto_k
    else:  # the same computation without the pilot's early stop or the checks
        gp = ppd.ComponentGP(bounds=bounds)
        Xs, ys = gp._set_data(X, y)
        prior = gp.sample_prior(n_prior, rng)
        logw = prior_log_weights(gp, Xs, ys, prior, n_prior, 0)
        e, k = ess(logw), pareto_k(logw)
        gp.condition(X, y, prior.subset(resample(logw, rng, N_KEEP)))
    return {"passed": bool(passed), "ess": float(e), "k": float(k), **coverage(gp, Xt, f)}


def nuts(X, y, Xt, f, seed: int) -> dict:
    """The NUTS fit of ``(X, y)`` at the default settings."""
    import pp_decomp as ppd

    gp = ppd.ComponentGP(bounds=np.array([[0.0] * D, [1.0] * D]))
    gp.fit(X, y, "nuts", seed=seed, warn=False)
    d = gp.diagnostics
    return {
        "converged": not d.problems(),
        "ess": float(d.ess_bulk_min),
        "rhat": float(d.rhat_max),
        **coverage(gp, Xt, f),
    }


def mean_se(a) -> tuple[float, float]:
    """Mean and standard error of ``a`` (SE NaN for fewer than two values)."""
    a = np.asarray(a, dtype=float)
    if len(a) == 0:
        return float("nan"), float("nan")
    se = a.std(ddof=1) / np.sqrt(len(a)) if len(a) > 1 else float("nan")
    return float(a.mean()), float(se)


def compare(fits: list[tuple[dict, dict]], i: int) -> dict:
    """Importance against NUTS at level ``LEVELS[i]`` over ``(importance, nuts)`` pairs."""
    imp = [a["cover"][i] for a, _ in fits]
    nut = [b["cover"][i] for _, b in fits]
    return {
        "fits": len(fits),
        "importance": mean_se(imp),
        "nuts": mean_se(nut),
        "difference": mean_se(np.subtract(imp, nut)),
    }


def summarise(rows: list[dict], sizes: list[int]) -> dict:
    """Per ``n``, arm and level each method's coverage and the paired difference over
    the fits that passed (and over all); the ESS bins pooled over ``n`` and arms."""
    out = {"per_n": [], "bins": {}}
    arms = [a for a in ("importance", "importance_small") if a in rows[0]]
    for n in sizes:
        r_n = [r for r in rows if r["n"] == n]
        s = {
            "n": n,
            "datasets": len(r_n),
            "nuts_converged": sum(r["nuts"]["converged"] for r in r_n),
        }
        for arm in arms:
            pairs = [(r[arm], r["nuts"]) for r in r_n]
            ok = [p for p in pairs if p[0]["passed"]]
            s[arm] = {
                "passed": len(ok),
                "ess_median": float(np.median([a["ess"] for a, _ in pairs])),
                "all": {str(v): compare(pairs, i) for i, v in enumerate(LEVELS)},
                "passed_fits": {str(v): compare(ok, i) for i, v in enumerate(LEVELS)},
            }
        out["per_n"].append(s)
    pairs = [(r[arm], r["nuts"]) for r in rows for arm in arms]
    groups = [("failed", [p for p in pairs if not p[0]["passed"]])]
    for lo, hi, label in BINS:
        groups.append((label, [p for p in pairs if p[0]["passed"] and lo <= p[0]["ess"] < hi]))
    for label, sel in groups:
        out["bins"][label] = {str(v): compare(sel, i) for i, v in enumerate(LEVELS)}
    passed = [(r["importance"], r["nuts"]) for r in rows if r["importance"]["passed"]]
    out["passed_default"] = {str(v): compare(passed, i) for i, v in enumerate(LEVELS)}
    return out


def line(label: str, c: dict) -> str:
    """``c`` (:func:`compare`) as one printed line."""
    (ci, si), (cn, sn), (dd, sd) = c["importance"], c["nuts"], c["difference"]
    return (
        f"{label}: {c['fits']} fits, importance {ci:.3f} ± {si:.3f}, NUTS {cn:.3f} ± {sn:.3f}, "
        f"importance − NUTS {signed(dd)} ± {sd:.3f}"
    )


def signed(x: float) -> str:
    """``x`` with its sign, ``nan`` without one."""
    return f"{x:+.3f}" if np.isfinite(x) else "nan"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=80, help="datasets per n")
    ap.add_argument("--n", default="8,15,30,60", help="training sizes, comma-separated")
    ap.add_argument("--m", type=int, default=100, help="test points")
    ap.add_argument("--prior-draws", type=int, default=32768, help="the loop's prior draws")
    ap.add_argument(
        "--small-draws",
        type=int,
        default=2048,
        help="prior draws of a second importance arm whose ESS spans the bins (0: none)",
    )
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=None, help="write every fit and the summary as JSON")
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    sizes = [int(v) for v in args.n.split(",")]
    rows, start = [], time.perf_counter()
    for n in sizes:
        for rep in range(args.reps):
            X, y, Xt, f, hyper = dataset(rep, n, args.m, args.seed)
            ss = np.random.SeedSequence(args.seed, spawn_key=(rep, n, 1))
            r1, r2 = (np.random.default_rng(s) for s in ss.spawn(2))
            row = {"n": n, "rep": rep, "truth": hyper}
            row["importance"] = a = importance(X, y, Xt, f, args.prior_draws, r1)
            if args.small_draws:
                row["importance_small"] = importance(X, y, Xt, f, args.small_draws, r2)
            row["nuts"] = b = nuts(X, y, Xt, f, seed=args.seed * 100003 + rep)
            rows.append(row)
            small = row.get("importance_small")
            extra = (
                f"small ESS {small['ess']:6.0f} {'pass' if small['passed'] else 'fail'} "
                f"cover {small['cover'][-1]:.2f}  "
                if small
                else ""
            )
            print(
                f"n={n:2d} rep {rep:3d}: importance ESS {a['ess']:6.0f} k {a['k']:5.2f} "
                f"{'pass' if a['passed'] else 'fail'} cover {a['cover'][-1]:.2f}  {extra}"
                f"NUTS {'ok ' if b['converged'] else 'bad'} cover {b['cover'][-1]:.2f}  "
                f"(true ls {min(hyper['ls']):.2f}-{max(hyper['ls']):.2f}, "
                f"sigma {hyper['sigma']:.3f})",
                flush=True,
            )
    print()
    summary = summarise(rows, sizes)
    names = {"importance": f"M={args.prior_draws}", "importance_small": f"M={args.small_draws}"}
    for s in summary["per_n"]:
        n = s["n"]
        arms = [a for a in names if a in s]
        print(
            f"n={n}: {s['datasets']} datasets, NUTS converged {s['nuts_converged']}, "
            + ", ".join(
                f"importance {names[a]} passed {s[a]['passed']} (median ESS "
                f"{s[a]['ess_median']:.0f})"
                for a in arms
            )
        )
        for a in arms:
            for level in LEVELS:
                c = s[a]["passed_fits"][str(level)]
                print("  " + line(f"n={n} {names[a]} passed, level {level:.2f}", c))
    for label, b in summary["bins"].items():
        for level in (0.5, 0.95):
            print(line(f"all n and M, {label}, level {level:.2f}", b[str(level)]))
    parts = [(f"M={args.prior_draws} passed", summary["passed_default"]["0.95"])]
    parts += [(label, summary["bins"][label]["0.95"]) for label in ("ESS 128-200", "ESS 200-400")]
    ok = [abs(c["difference"][0]) <= 2 * c["difference"][1] for _, c in parts if c["fits"] > 1]
    verdict = "within" if ok and all(ok) else "NOT within" if ok else "not measured against"
    detail = ", ".join(
        f"{label} {signed(c['difference'][0])} ± {c['difference'][1]:.3f} ({c['fits']} fits)"
        for label, c in parts
    )
    print(
        f"verdict: importance intervals at ESS >= {N_KEEP} are {verdict} 2 SE of NUTS's at "
        f"0.95 ({detail}); {time.perf_counter() - start:.0f} s"
    )
    if args.out:
        report = {"args": vars(args), "levels": LEVELS, "summary": summary, "fits": rows}
        with open(args.out, "w") as fh:
            json.dump(report, fh, indent=1)


if __name__ == "__main__":
    main()
