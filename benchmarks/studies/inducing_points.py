"""Would an inducing-point predictive make full-Bayes asks at large T fast and still honest?

At ``T`` observations a full-Bayes ask on a box reads every kept draw's
``(T, T)`` factor at each evaluation of the acquisition (docs/performance.md).
The projected-process predictive through ``M`` inducing inputs ``Z`` reads
``(M, M)`` matrices instead, ``(M / T)²`` of the bytes: each draw's exact
posterior at ``Z`` (mean ``m_Z``, covariance ``Σ_Z``) carried to ``x`` by the
prior's conditional,

    mean(x) = aᵀ m_Z,   var(x) = k(x, x) - k(x, Z) a + aᵀ Σ_Z a,   a = K_ZZ⁻¹ k(Z, x),

which is exact when ``Z = X`` and otherwise adds at most the Nyström residual
``k(x, x) - k(x, Z) K_ZZ⁻¹ k(Z, x)`` to the variance. ``Z`` is the best subset of
the data inputs there is for it, chosen per draw by greedy pivoted Cholesky of
the draw's kernel matrix (each pivot the input worst explained by the ones
before).

The study tells ``T`` evaluations of ``speed/scale.py``'s problem (4-D box, ``J``
smooth components) in one call, lets full Bayes make its first fits (one ask),
and then, for ``--draws`` evenly spaced draws of each GP, compares the
projected-process predictive at each ``M`` with the exact one at ``--points``
uniform inputs: the ratio of their variances, the mean's error in exact
standard deviations, and the coverage of the noise-free truth by the 95%
intervals of the draws' mixture (Gaussian, mean ± 1.96 sd) for the components.
Prints one line per GP and ``M``, then a summary line::

    python benchmarks/studies/inducing_points.py --T 1000 --M 128,256,512
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings

import numpy as np
from scipy import linalg
from scipy.stats import norm

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "speed"))

Z95 = norm.ppf(0.975)


def pivots(K: np.ndarray, m: int) -> np.ndarray:
    """The first ``m`` pivots of the greedy pivoted Cholesky of ``K (n, n)``: (m,).

    Each pivot is the row of largest residual variance given the pivots before it,
    so every prefix is the greedy choice of its size.
    """
    n = len(K)
    m = min(m, n)
    diag, rows, chosen = np.diag(K).astype(float), np.zeros((m, n)), []
    for k in range(m):
        i = int(np.argmax(diag))
        chosen.append(i)
        rows[k] = (K[i] - rows[:k, i] @ rows[:k]) / np.sqrt(max(diag[i], 1e-300))
        diag = np.maximum(diag - rows[k] ** 2, 0.0)
        diag[chosen] = -np.inf  # never chosen twice, whatever the rounding
    return np.array(chosen)


def projected(K: np.ndarray, L_inv: np.ndarray, z: np.ndarray, Kt: np.ndarray, kxx, P):
    """One draw's projected-process means and variances at the test inputs through
    the data inputs ``P`` (module docstring): (m,), (m,).

    ``K`` (n, n) the draw's kernel on the data, ``L_inv`` its factor's inverse with
    the noise, ``z = L⁻¹ y``, ``Kt`` (n, m) the kernel between data and test
    inputs, ``kxx`` (m,) the prior variance at the test inputs.
    """
    alpha = L_inv.T @ z  # (K + σ²I)⁻¹ y
    Kxz = K[:, P]
    m_Z = Kxz.T @ alpha
    W = L_inv @ Kxz
    Kzz = K[np.ix_(P, P)]
    S_Z = Kzz - W.T @ W
    Kzz = Kzz + 1e-8 * np.eye(len(P)) * np.trace(K) / len(K)
    A = linalg.cho_solve(linalg.cho_factor(Kzz, lower=True), Kt[P])  # (M, m)
    mean = A.T @ m_Z
    var = kxx - np.einsum("zm,zm->m", Kt[P], A) + np.einsum("zm,zm->m", A, S_Z @ A)
    return mean, np.maximum(var, 0.0)


def fitted(T: int, J: int, seed: int):
    """The full-Bayes optimiser after its first ask on ``T`` points told at once, and
    the problem."""
    import scale

    import pp_decomp as ppd

    p = scale.problem(J, seed)
    rng = np.random.default_rng(seed + 1)
    X = p.domain.sample(T, seed=rng)
    opt = ppd.Optimizer(p, None, inference="nuts", seed=seed)
    opt.tell(X, p.evaluate(X, seed=rng))
    opt.ask()
    return opt, p


def compare(comp, Xt, truth, Ms, n_draws: int) -> dict:
    """Per ``M`` (and ``"exact"``): variance ratios, mean errors in exact sds, and
    coverage of ``truth`` (model units; ``None``: not known) by 95% intervals."""
    from pp_decomp.components.posterior.batched import (
        draws_cov,
        draws_prior_var,
        mixture_moments,
    )

    post, gp = comp.post, comp.gp
    S = len(post.logw)
    kept = min(n_draws, S)
    idx = ((np.arange(kept) + 0.5) * S / kept).astype(int)  # evenly spaced, as a thinned view's
    Xs = gp.scale_X(Xt)
    means = {M: [] for M in ["exact", *Ms]}
    variances = {M: [] for M in ["exact", *Ms]}
    exact_mean, exact_var = post.at(Xs, idx)
    for k, s in enumerate(idx):
        d = post.draws.subset([s])
        K = draws_cov(post.kernel, post.X, post.X, d)[0] + post.mean_var
        Kt = draws_cov(post.kernel, post.X, Xs, d)[0] + post.mean_var
        kxx = draws_prior_var(post.kernel, Xs, d)[0] + post.mean_var
        P = pivots(K, max(Ms))
        means["exact"].append(exact_mean[k])
        variances["exact"].append(exact_var[k])
        for M in Ms:
            mean, var = projected(K, post.L_inv[s], post.z[s], Kt, kxx, P[:M])
            means[M].append(mean)
            variances[M].append(var)
    out = {}
    ev, em = np.array(variances["exact"]), np.array(means["exact"])
    for M in means:
        mu, var = np.array(means[M]), np.array(variances[M])
        ratio = var / np.maximum(ev, 1e-300)
        err = np.abs(mu - em) / np.sqrt(np.maximum(ev, 1e-300))
        cover = np.nan
        if truth is not None:
            m_mix, v_mix = mixture_moments(mu, var)
            cover = float(np.mean(np.abs(truth - m_mix) <= Z95 * np.sqrt(v_mix)))
        out[M] = (np.median(ratio), np.quantile(ratio, 0.9), np.median(err), cover)
    return out


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--T", type=int, default=1000, help="observations told at once")
    ap.add_argument("--J", type=int, default=3, help="components")
    ap.add_argument("--M", default="128,256,512", help="inducing inputs, comma-separated")
    ap.add_argument("--draws", type=int, default=8, help="draws compared per GP")
    ap.add_argument("--points", type=int, default=300, help="test inputs")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args(argv)
    Ms = sorted({int(v) for v in a.M.split(",")})
    if not Ms or Ms[0] < 1 or Ms[-1] > a.T:
        ap.error(f"--M must be between 1 and --T={a.T}; got {a.M!r}")
    warnings.simplefilter("ignore")  # the fits' diagnostics are not the question here
    start = time.perf_counter()
    opt, p = fitted(a.T, a.J, a.seed)
    print(f"T={a.T} J={a.J}: first fits in {time.perf_counter() - start:.1f} s")
    Xt = p.domain.sample(a.points, seed=np.random.default_rng(a.seed + 2))
    F = np.asarray(p.components(Xt), dtype=float)
    names = list(p.component_names)
    rows = []
    for name, comp in opt.updater.components.items():
        gp = comp.gp
        truth = (F[:, names.index(name)] - gp.y_mean) / gp.y_std if name in names else None
        res = compare(comp, Xt, truth, Ms, a.draws)
        print(f"T={a.T} {name:<9} exact:  coverage {res['exact'][3]:.3f}")
        for M in Ms:
            r, r90, err, cover = res[M]
            rows.append((M, r, cover, res["exact"][3]))
            print(
                f"T={a.T} {name:<9} M={M:4d}: variance x{r:.2f} (90%: x{r90:.2f}), "
                f"|mean error| {err:.3f} sd, coverage {cover:.3f}, "
                f"reads {(M / a.T) ** 2:.3f} of the exact factors"
            )
    for M in Ms:
        mine = [r for r in rows if r[0] == M]
        covers = [r[2] for r in mine if np.isfinite(r[2])]
        exact = [r[3] for r in mine if np.isfinite(r[3])]
        print(
            f"T={a.T} M={M}: median variance x{np.median([r[1] for r in mine]):.2f} the exact "
            f"over GPs; components' coverage {np.mean(covers):.3f} against {np.mean(exact):.3f} "
            "exact (nominal 0.95)"
        )


if __name__ == "__main__":
    main()
