"""Why decomposition wins or loses on perceived temperature: the two posteriors of ``g``.

Usage: python benchmarks/studies/perceived_diagnosis.py [--day 2019-07-15] [--humidity dewpoint]
       [--n 10,30,60]
       [--trials 5] [--samples 4096] [--out FILE.json]

For each trial, ``n`` random stations are observed (seeded). Two models of the
perceived temperature ``g`` are fitted by MAP, as the loop fits them:

* decomposed: one ``ComponentGP`` per component (temperature, humidity, wind);
  ``g``'s posterior is the ``samples`` draws of independent Gaussian components
  pushed through ``g`` (as ``d-gpucb-mc`` does);
* direct: one ``ComponentGP`` on ``g`` itself (as GP-UCB does).

At the unobserved stations both are scored against the true ``g``: RMSE of the
posterior median, coverage of the central 95% interval, mean upper half-width
(97.5% quantile minus median: what a UCB adds to the median), and the same
split by the truth's regime (heat index, air temperature, wind chill). It also
reports each component's RMSE and 95% coverage, and the correlation of the
standardised errors of temperature and humidity at the unobserved stations,
which independent components ignore. ``--humidity dewpoint`` models the dew
point instead of the relative humidity.

It first prints the upper quantiles of ``g`` over all stations of the day
against two priors of ``g`` at a station nothing has been learnt about: the
components drawn independently from Gaussians with the stations' means and
standard deviations and pushed through ``g`` (what a decomposed model with
independent component priors believes), and one Gaussian on ``g`` itself (what
GP-UCB's prior believes). A UCB keeps exploring stations whose prior upper
quantile exceeds the best value found.
"""

from __future__ import annotations

import argparse
import os

for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import json  # noqa: E402

import numpy as np  # noqa: E402
from scipy.stats import norm  # noqa: E402

Z95 = norm.ppf(0.975)


def regimes(F: np.ndarray) -> dict[str, np.ndarray]:
    """Masks of the NWS branch the true components select: heat index, air, wind chill."""
    t_f = F[:, 0] * 9 / 5 + 32
    hot = t_f >= 80
    cold = (t_f <= 50) & (F[:, 2] * 2.236936 >= 3)
    return {"heat": hot, "air": ~hot & ~cold, "chill": cold}


def g_scores(truth, lo, med, hi) -> dict:
    """RMSE of the median, 95% coverage and mean upper half-width over the given rows."""
    if len(truth) == 0:
        return {}
    return {
        "rmse": float(np.sqrt(np.mean((med - truth) ** 2))),
        "cover95": float(np.mean((truth >= lo) & (truth <= hi))),
        "upper": float(np.mean(hi - med)),
        "count": len(truth),
    }


def prior_tails(problem, samples: int = 200_000, seed: int = 0) -> dict:
    """Upper quantiles of ``g``: over the stations, under independent Gaussian
    components pushed through ``g``, and under one Gaussian on ``g``."""
    rng = np.random.default_rng(seed)
    X = problem.domain.X
    F = problem.components(X)
    g = problem.compose(F, X)
    draws = rng.normal(F.mean(0), F.std(0), size=(samples, F.shape[1]))
    draws[:, 2] = np.abs(draws[:, 2])  # wind speed
    g_indep = problem.compose(draws, X[:1])
    g_gauss = rng.normal(g.mean(), g.std(), samples)
    qs = (0.9, 0.99, 0.995)
    return {
        "quantiles": qs,
        "stations": np.quantile(g, qs).tolist(),
        "independent components": np.quantile(g_indep, qs).tolist(),
        "Gaussian on g": np.quantile(g_gauss, qs).tolist(),
        "max over stations": float(g.max()),
    }


def one_trial(problem, n: int, seed: int, samples: int) -> dict:
    from pp_decomp import ComponentGP

    rng = np.random.default_rng(seed)
    X = problem.domain.X
    F = problem.components(X)
    g = problem.compose(F, X)
    seen = rng.choice(len(X), n, replace=False)
    rest = np.setdiff1d(np.arange(len(X)), seen)
    bounds = problem.domain.bounds
    fits = [
        ComponentGP(input_dim=2, bounds=bounds).fit(X[seen], F[seen, j], "map", seed=seed)
        for j in range(F.shape[1])
    ]
    mv = [gp.predict(X[rest]) for gp in fits]
    M = np.stack([m for m, _ in mv], 1)
    S = np.sqrt(np.stack([v for _, v in mv], 1))
    z = rng.standard_normal((samples, 1, F.shape[1]))
    G = problem.compose(M[None] + S[None] * z, X[rest])  # (samples, m)
    lo, med, hi = np.quantile(G, [0.025, 0.5, 0.975], axis=0)
    direct = ComponentGP(input_dim=2, bounds=bounds).fit(X[seen], g[seen], "map", seed=seed)
    m_d, v_d = direct.predict(X[rest])
    sd_d = np.sqrt(v_d)
    out = {"decomposed": {}, "direct": {}}
    masks = {"all": np.ones(len(rest), bool), **regimes(F[rest])}
    for name, mask in masks.items():
        truth = g[rest][mask]
        out["decomposed"][name] = g_scores(truth, lo[mask], med[mask], hi[mask])
        out["direct"][name] = g_scores(
            truth, (m_d - Z95 * sd_d)[mask], m_d[mask], (m_d + Z95 * sd_d)[mask]
        )
    err = (F[rest] - M) / S
    out["components"] = {
        name: {
            "rmse": float(np.sqrt(np.mean((F[rest, j] - M[:, j]) ** 2))),
            "cover95": float(np.mean(np.abs(err[:, j]) <= Z95)),
        }
        for j, name in enumerate(problem.component_names)
    }
    out["error_correlation_T_H"] = float(np.corrcoef(err[:, 0], err[:, 1])[0, 1])
    return out


def _mean(trials: list[dict], *path) -> float:
    vals = []
    for t in trials:
        v = t
        for p in path:
            v = v.get(p, {}) if isinstance(v, dict) else {}
        if isinstance(v, int | float):
            vals.append(v)
    return float(np.mean(vals)) if vals else float("nan")


def main(argv=None) -> None:
    from pp_decomp.models.perceived_temperature import perceived_temperature

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--day", default="2019-07-15")
    p.add_argument("--humidity", default="dewpoint", help="dewpoint or rh")
    p.add_argument("--n", default="10,30,60")
    p.add_argument("--trials", type=int, default=5)
    p.add_argument("--samples", type=int, default=4096)
    p.add_argument("--out", default=None)
    a = p.parse_args(argv)
    problem = perceived_temperature(day=a.day, humidity=a.humidity)
    tails = prior_tails(problem)
    report = {"prior_tails": tails}
    print(f"max of g over the stations: {tails['max over stations']:.1f} °C")
    for key in ("stations", "independent components", "Gaussian on g"):
        qs = ", ".join(
            f"q{q}: {v:.1f}" for q, v in zip(tails["quantiles"], tails[key], strict=True)
        )
        print(f"upper quantiles of g, {key}: {qs}")
    print(f"day {a.day}, humidity {a.humidity}: {problem.domain.size} stations, {a.trials} trials")
    print("n | model | regime | RMSE | 95% coverage | upper half-width | stations")
    for n in (int(v) for v in a.n.split(",")):
        trials = [one_trial(problem, n, 1000 * n + k, a.samples) for k in range(a.trials)]
        report[n] = trials
        for model in ("decomposed", "direct"):
            for reg in ("all", "heat", "air", "chill"):
                c = _mean(trials, model, reg, "count")
                if not np.isfinite(c):
                    continue
                r, cov, up = (_mean(trials, model, reg, k) for k in ("rmse", "cover95", "upper"))
                print(f"{n} | {model} | {reg} | {r:.2f} | {cov:.3f} | {up:.2f} | {c:.0f}")
        comps = ", ".join(
            f"{c} RMSE {_mean(trials, 'components', c, 'rmse'):.2f} "
            f"cover {_mean(trials, 'components', c, 'cover95'):.3f}"
            for c in problem.component_names
        )
        corr = np.mean([t["error_correlation_T_H"] for t in trials])
        print(f"{n} | components: {comps}; corr(err T, err humidity) {corr:+.2f}")
    if a.out:
        with open(a.out, "w") as fh:
            json.dump(report, fh, indent=1)


if __name__ == "__main__":
    main()
