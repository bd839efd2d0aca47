"""Would a learned output warp bring the components' intervals to nominal (issue 66)?

For each problem of ``--problems`` and seed of ``--seeds``, a run of the default
strategy with ``inference="map"`` collects ``--iterations`` evaluations, as
``pp-decomp calibration`` makes them, and is scored at the model-based steps
``--at`` on the same ``--points`` inputs (fixed per seed, as that command draws
them). At each scored step ``t`` the run's own GPs are scored
(:func:`pp_decomp.apps.calibration.step_coverage`, "package"), and each
component's data before ``t`` (inputs scaled to the unit box, ``y_j`` as
observed) are refitted by MAP on the default component model (Matérn 3/2, the
default :class:`~pp_decomp.Priors`, the constant mean integrated) under each arm
of ``--warps``. The GP regresses
``v = (w(u; ψ) − m_w) / s_w`` (``m_w``, ``s_w`` the mean and sd of ``w`` over the
data, so the amplitude's prior, tight around 1, stays right) with
``Σ log w'(u_i) − n log s_w`` added to the log likelihood
(:mod:`pp_decomp.components.output_warps`): for given data this is the exact
Jacobian of a monotone map of each ``u_i``; that ``m_w`` and ``s_w`` depend on the
data is ignored, as the standardisation of ``y`` is in every arm:

* ``none``: ``v = u``, the standardised ``y_j`` (the package's model; a check on
  this study);
* ``sas``: ``w`` sinh-arcsinh of ``u``, ``ε ~ Normal(0, --skew-sd)``,
  ``δ ~ LogNormal(0, --tail-sd)``;
* ``log`` / ``log-sas``: ``none`` / ``sas`` on the standardised ``log y_j``;
* ``box-cox``: ``w`` Box-Cox of ``y_j`` over its geometric mean,
  ``λ ~ Normal(--lambda-mu, --lambda-sd)`` (``λ = 1`` the identity, ``0`` the log);
* ``choose``: per component, ``none`` or ``log``, whichever has the higher log
  likelihood at its MAP on ``y``'s scale (the same parameters in both).

``log``, ``log-sas`` and ``box-cox`` need every observation positive; a component
that is not is fitted as ``none`` (``sas`` for ``log-sas``). All fits are MAP from
``--starts`` starts.

A fit's central interval of the noise-free ``f_j`` at each input is the inverse
warp of the latent GP's ``μ ± z σ``; the objective's is the central interval of
512 samples per input pushed through ``g`` (components independent; its
quantiles are order statistics, so a Box-Cox draw at ``+∞``, past the image's
edge where ``λ < 0``, counts as a large value where ``g`` keeps it one, and
where ``g`` makes it NaN the input is scored as a miss). All fits find the
mode in the parameters' own space, as the package's MAP does. Prints one
line per problem, step, arm and level: the components' and the objective's
coverage, mean ± SE over seeds, then each arm's log likelihood at its MAP on
``y``'s scale (Jacobians included, so arms compare; a learned warp's extra
parameters usually make it higher), summed over components, minus
``none``'s, and the share of seeds on which ``choose`` took the log::

    python benchmarks/studies/output_warp_coverage.py --problems flu,synthetic \\
        --seeds 10 --out FILE.json
"""

from __future__ import annotations

import os

for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from dataclasses import dataclass  # noqa: E402

import numpy as np  # noqa: E402
from scipy import optimize, stats  # noqa: E402

from pp_decomp.components.output_warps import (  # noqa: E402
    box_cox,
    box_cox_inverse,
    box_cox_log_slope,
    sinh_arcsinh,
    sinh_arcsinh_inverse,
    sinh_arcsinh_log_slope,
)

LEVELS = (0.5, 0.9, 0.95)
WARPS = ("none", "sas", "log", "log-sas", "box-cox", "choose")
KERNEL = "matern32"
# each arm: how y is prepared (t), the learned warp on it, and the arm for
# components it cannot take (log and Box-Cox need every observation positive)
ARMS = {
    "none": ("standardise", "none", None),
    "sas": ("standardise", "sas", None),
    "log": ("log", "none", "none"),
    "log-sas": ("log", "sas", "sas"),
    "box-cox": ("geometric", "box-cox", "none"),
}


@dataclass
class Data:
    """One component's data as the warp takes it: ``u = (t(y) − m) / s``, with ``t``
    the identity or ``log`` (``m`` the mean and ``s`` the sd of ``t(y)``), or the
    positive ``u = y / s`` (``s`` the geometric mean; Box-Cox); and ``Σ log |du/dy|``,
    the Jacobian's fixed part."""

    X: np.ndarray
    u: np.ndarray
    m: float
    s: float
    prep: str
    log_dudy: float

    @classmethod
    def of(cls, X, y, prep: str) -> Data:
        if prep == "geometric":
            s = float(np.exp(np.mean(np.log(y))))
            return cls(X, y / s, 0.0, s, prep, -len(y) * np.log(s))
        t = np.log(y) if prep == "log" else y
        m, s = float(np.mean(t)), float(np.std(t)) or 1.0
        log_dudy = -len(y) * np.log(s) - (float(np.sum(np.log(y))) if prep == "log" else 0.0)
        return cls(X, (t - m) / s, m, s, prep, log_dudy)

    def to_y(self, u: np.ndarray) -> np.ndarray:
        t = self.m + self.s * u
        return np.exp(t) if self.prep == "log" else t


class WarpedModel:
    """The default component model on ``v = (w(u; ψ) − m_w) / s_w``, ``m_w`` and
    ``s_w`` the mean and sd of ``w`` over the data (so the amplitude's tight prior
    around 1 stays right), the log-likelihood plus ``Σ log w'(u_i) − n log s_w``;
    ``w`` the identity (no ``ψ``, no restandardising), sinh-arcsinh or Box-Cox.
    Compiled once per input dimension and warp; data swapped."""

    def __init__(self, d: int, kind: str, args):
        import pymc as pm
        import pytensor
        import pytensor.tensor as pt

        from pp_decomp.components import Priors
        from pp_decomp.components.posterior.batched import JITTER
        from pp_decomp.kernels import pymc_cov

        priors, self.kind = Priors(), kind
        with pm.Model() as model:
            X = pm.Data("X", np.zeros((3, d)))
            u = pm.Data("u", np.ones(3))
            Xs = pm.Data("Xs", np.zeros((2, d)))
            cov = pymc_cov(KERNEL, d, priors.pymc_ls(d), priors.pymc_eta())
            cov = cov + pm.gp.cov.Constant(priors.mean_var)
            sigma = priors.pymc_sigma()
            v, jac, psi = u, 0.0, []
            if kind == "sas":
                psi = [
                    pm.Normal("skew", 0.0, args.skew_sd),
                    pm.LogNormal("tail", 0.0, args.tail_sd),
                ]
                w, slope = sinh_arcsinh(u, *psi, pt), sinh_arcsinh_log_slope(u, *psi, pt)
            elif kind == "box-cox":
                psi = [pm.Normal("lam", args.lambda_mu, args.lambda_sd)]
                w, slope = box_cox(u, *psi, pt), box_cox_log_slope(u, *psi, pt)
            if psi:
                m_w, s_w = pt.mean(w), pt.std(w)
                v, jac = (w - m_w) / s_w, pt.sum(slope) - u.shape[0] * pt.log(s_w)
                psi += [m_w, s_w]
            K = cov(X) + (sigma**2 + JITTER) * pt.eye(u.shape[0])
            lml = pm.logp(pm.MvNormal.dist(pt.zeros_like(u), K), v) + jac
            pm.Potential("lik", lml)
            L = pt.linalg.cholesky(K)
            A = pt.linalg.solve_triangular(L, cov(X, Xs), lower=True)
            mu = A.T @ pt.linalg.solve_triangular(L, v, lower=True)
            var = pt.maximum(cov(Xs, diag=True) - pt.sum(A**2, axis=0), 1e-12)
        self.model, self.pm = model, pm
        ins = model.value_vars
        outs = model.replace_rvs_by_values([mu, var, lml, *psi])
        self._predict = pytensor.function(ins, outs, on_unused_input="ignore")
        # the mode in the parameters' own space, as the package's MAP finds it
        self._logp = model.compile_logp(jacobian=False)
        self._dlogp = model.compile_dlogp(jacobian=False)
        ip = model.initial_point()
        self.names = [v.name for v in ins]
        self.shapes = [np.shape(ip[n]) for n in self.names]
        self.x0 = np.concatenate([np.ravel(ip[n]) for n in self.names])

    def _point(self, z: np.ndarray) -> dict:
        out, i = {}, 0
        for name, shape in zip(self.names, self.shapes, strict=True):
            k = int(np.prod(shape))
            out[name] = z[i : i + k].reshape(shape)
            i += k
        return out

    def fit(self, data: Data, Xs: np.ndarray, rng: np.random.Generator, starts: int):
        """MAP from the prior's centre and ``starts − 1`` jittered starts; the latent
        ``(μ, σ²)`` at ``Xs`` in ``v``'s units, the log likelihood at the MAP on
        ``u``'s scale, and the warp's ``(ψ..., m_w, s_w)`` (empty unwarped)."""
        self.pm.set_data({"X": data.X, "u": data.u, "Xs": Xs}, model=self.model)

        def neg(z):
            p = self._point(z)
            value = -float(self._logp(p))
            grad = -np.asarray(self._dlogp(p), dtype=float)
            ok = np.isfinite(value) and np.all(np.isfinite(grad))
            return (value, grad) if ok else (1e30, np.zeros_like(z))

        best = None
        for k in range(starts):
            z0 = self.x0 + (rng.uniform(-1, 1, self.x0.shape) if k else 0.0)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                res = optimize.minimize(neg, z0, jac=True, method="L-BFGS-B")
            if best is None or res.fun < best.fun:
                best = res
        mu, var, lml, *psi = self._predict(**self._point(best.x))
        return mu, var, float(lml), [float(a) for a in psi]

    def to_u(self, v: np.ndarray, psi) -> np.ndarray:
        """The latent ``v`` back on ``u``'s scale (the warp inverted)."""
        if self.kind == "none":
            return v
        *p, m_w, s_w = psi
        w = m_w + s_w * v
        return sinh_arcsinh_inverse(w, *p) if self.kind == "sas" else box_cox_inverse(w, *p)


def fitted(models, arm: str, X, y, unit, rng, starts: int) -> dict:
    """One component fitted under ``arm`` (its fallback where ``y`` is not positive):
    the latent's quantiles at ``LEVELS``' tails and 512 draws, in ``y``'s units, at
    ``unit``, and its log likelihood at the MAP on ``y``'s scale."""
    prep, kind, fallback = ARMS[arm]
    if fallback is not None and not np.all(y > 0):
        return fitted(models, fallback, X, y, unit, rng, starts)
    data = Data.of(X, y, prep)
    model = models[kind]
    mu, var, lml, psi = model.fit(data, unit, rng, starts)
    q = np.array(LEVELS)
    z = stats.norm.ppf(np.concatenate([(1 - q) / 2, (1 + q) / 2]))
    tails = data.to_y(model.to_u(mu + np.sqrt(var) * z[:, None], psi))
    v = mu + np.sqrt(var) * rng.standard_normal((512, len(mu)))
    draws = data.to_y(model.to_u(v, psi))
    return {"tails": tails, "draws": draws, "lml": lml + data.log_dudy, "arm": arm}


def central_coverage(lo_hi: np.ndarray, truth: np.ndarray) -> float:
    lo, hi = lo_hi
    return float(np.mean((truth >= lo) & (truth <= hi)))


def score_step(arms, models, comps, Xs, unit, F_true, h_true, problem, rng, starts) -> dict:
    """Coverage of each component and of the objective (components independent)
    under every arm, and each arm's log likelihood at the MAP per component on
    ``y``'s scale; ``choose`` takes per component the one of ``none`` and ``log``
    with the higher (the two have the same parameters)."""
    L = len(LEVELS)
    fits = {
        a: [fitted(models, a, X, y, unit, rng, starts) for X, y in comps]
        for a in arms
        if a != "choose"
    }
    if "choose" in arms:
        fits["choose"] = [
            max(pair, key=lambda f: f["lml"])
            for pair in zip(fits["none"], fits["log"], strict=True)
        ]
    out = {}
    for arm, fs in fits.items():
        cover = [
            [central_coverage(f["tails"][[i, i + L]], F_true[:, j]) for i in range(L)]
            for j, f in enumerate(fs)
        ]
        h = problem.signed_objective(np.stack([f["draws"] for f in fs], axis=-1), Xs)
        q = np.array(LEVELS)
        # order statistics, not interpolation: a Box-Cox draw past its image's edge is +inf
        tails = np.concatenate([(1 - q) / 2, (1 + q) / 2])
        lo, hi = np.quantile(h, tails, axis=0, method="inverted_cdf").reshape(2, L, -1)
        out[arm] = {
            "component": cover,
            "objective": [central_coverage((lo[i], hi[i]), h_true) for i in range(L)],
            "lml": [float(f["lml"]) for f in fs],
            "used": [f["arm"] for f in fs],
        }
    return out


def run_seed(name: str, seed: int, iterations: int, at: list[int], n_points, models) -> dict:
    """One MAP run scored at steps ``at``: the package's GPs and every arm."""
    from pp_decomp import Optimizer
    from pp_decomp.apps.calibration import step_coverage
    from pp_decomp.models import get_problem
    from pp_decomp.space import CandidateSet

    problem = get_problem(name, seed=seed)
    opt = Optimizer(problem, seed=seed, inference="map")
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(11,)))
    dom = problem.domain  # the scored inputs as pp-decomp calibration draws them
    if isinstance(dom, CandidateSet):
        Xs = dom.X[rng.choice(dom.size, min(n_points, dom.size), replace=False)]
    else:
        Xs = dom.sample(n_points, seed=rng)
    F_true = np.asarray(problem.components(Xs), dtype=float)
    h_true = problem.signed_objective(F_true, Xs)
    lo, hi = problem.domain.bounds
    out = {}
    while opt.n < iterations:
        x = opt.ask()
        t = opt.n + 1
        if t in at and opt.pending.items[0][1]["phase"] == "acquisition":
            pkg = step_coverage(opt.setup, opt.state, opt.models, t, Xs, LEVELS, seed=rng)
            X = (opt.state.X - lo) / (hi - lo)
            comps = [(X, opt.state.Y[:, j]) for j in range(opt.state.Y.shape[1])]
            arms = {
                "package": {
                    "component": pkg["component"][:, :, 0].tolist(),
                    "objective": pkg["objective"][:, 0].tolist(),
                }
            }
            unit = (Xs - lo) / (hi - lo)
            arms.update(
                score_step(
                    models["arms"],
                    models,
                    comps,
                    Xs,
                    unit,
                    F_true,
                    h_true,
                    problem,
                    rng,
                    models["starts"],
                )
            )
            out[t] = arms
        opt.tell(x, problem.evaluate(x[None], seed=rng)[0])
    return out


def summary(name: str, runs: list[dict], arms: list[str]) -> list[str]:
    lines = []
    for t in sorted({t for r in runs for t in r}):
        at = [r[t] for r in runs if t in r]
        for arm in ["package", *arms]:
            for i, level in enumerate(LEVELS):
                comp = np.array([a[arm]["component"] for a in at])[:, :, i]  # (seeds, J)
                obj = np.array([a[arm]["objective"][i] for a in at])
                cells = "  ".join(_mean_se(c) for c in comp.T)
                lines.append(
                    f"{name} t={t:3d} {arm:8s} level {level:.2f}: components {cells}"
                    f"  objective {_mean_se(obj)}  ({len(at)} seeds)"
                )
        for arm in arms[1:]:
            d = np.array([np.sum(a[arm]["lml"]) - np.sum(a[arms[0]]["lml"]) for a in at])
            lines.append(
                f"{name} t={t:3d} {arm:8s} log likelihood at the MAP − {arms[0]}'s: {_mean_se(d)}"
            )
        if "choose" in arms:
            used = np.array([a["choose"]["used"] for a in at]) == "log"  # (seeds, J)
            share = "  ".join(f"{float(c):.1f}" for c in used.mean(axis=0))
            lines.append(f"{name} t={t:3d} choose   share of seeds on log: {share}")
    return lines


def _mean_se(x) -> str:
    x = np.asarray(x, dtype=float)
    se = float(np.std(x, ddof=1) / np.sqrt(len(x))) if len(x) > 1 else float("nan")
    return f"{float(np.mean(x)):.3f} ± {se:.3f}"


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--problems", default="flu,synthetic")
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--iterations", type=int, default=30)
    ap.add_argument("--at", default="15,30", help="scored steps, comma-separated")
    ap.add_argument("--points", type=int, default=256)
    ap.add_argument("--warps", default=",".join(WARPS))
    ap.add_argument("--skew-sd", type=float, default=1.0)
    ap.add_argument("--tail-sd", type=float, default=0.5)
    ap.add_argument("--lambda-mu", type=float, default=0.5)
    ap.add_argument("--lambda-sd", type=float, default=0.5)
    ap.add_argument("--starts", type=int, default=3)
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    arms = args.warps.split(",")
    bad = [a for a in arms if a not in WARPS]
    if bad or arms[0] != "none" or ("choose" in arms and "log" not in arms):
        raise SystemExit(
            f"--warps must start with 'none' and name warps of {WARPS} ('choose' with "
            f"'log'); got {arms}"
        )
    at = [int(t) for t in args.at.split(",")]
    report = {"args": vars(args), "levels": list(LEVELS), "runs": {}}
    for name in args.problems.split(","):
        from pp_decomp.models import get_problem

        d = get_problem(name, seed=0).dim
        kinds = {ARMS[a][1] for a in arms if a != "choose"} | {"none"}
        models = {kind: WarpedModel(d, kind, args) for kind in kinds}
        models["arms"], models["starts"] = arms, args.starts
        runs, start = [], time.perf_counter()
        for seed in range(args.seeds):
            runs.append(run_seed(name, seed, args.iterations, at, args.points, models))
        for line in summary(name, runs, arms):
            print(line, flush=True)
        print(f"{name}: {args.seeds} seeds in {time.perf_counter() - start:.0f} s", flush=True)
        report["runs"][name] = [{str(t): a for t, a in r.items()} for r in runs]
    if args.out:
        with open(args.out, "w") as f:
            json.dump(report, f, separators=(",", ":"))


if __name__ == "__main__":
    main()
