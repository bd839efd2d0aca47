"""The Gaussian log likelihood of many covariance matrices: the compiled loop
(``pp_decomp.components.posterior.likelihood``) against numpy's batched
``cholesky`` and ``solve`` (the way it was computed before), on the same
matrices, as the prior-importance and proposal weights meet them.

Usage: python benchmarks/speed/likelihood_speed.py [--cases 32768x5,4096x40,...]
       [--calls 5]

Each case is ``S x n`` (matrices, points). Prints the median milliseconds of
one likelihood of every matrix by each way, their ratio and the largest
absolute difference, one line per case.
"""

from __future__ import annotations

import argparse
import os

for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import time  # noqa: E402

import numpy as np  # noqa: E402

from pp_decomp.components.posterior.likelihood import gaussian_log_likelihoods  # noqa: E402

CASES = "32768x5,32768x10,8192x20,4096x40,4096x100,512x300"


def numpy_batched(K: np.ndarray, r: np.ndarray) -> np.ndarray:
    L = np.linalg.cholesky(K)
    z = np.linalg.solve(L, np.broadcast_to(r, K.shape[:-1])[..., None])[..., 0]
    log_det_half = np.log(np.diagonal(L, axis1=1, axis2=2)).sum(1)
    return -0.5 * np.einsum("si,si->s", z, z) - log_det_half - 0.5 * len(r) * np.log(2 * np.pi)


def median_ms(f, args, calls: int) -> float:
    times = []
    for _ in range(calls):
        start = time.perf_counter()
        f(*args)
        times.append(time.perf_counter() - start)
    return 1e3 * float(np.median(times))


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", default=CASES)
    ap.add_argument("--calls", type=int, default=5)
    args = ap.parse_args(argv)
    rng = np.random.default_rng(0)
    print("S x n | numpy ms | compiled ms | compiled / numpy | max abs diff")
    for case in args.cases.split(","):
        S, n = (int(v) for v in case.split("x"))
        A = rng.normal(size=(S, n, n))
        K, r = A @ A.transpose(0, 2, 1) + n * np.eye(n), rng.normal(size=n)
        diff = float(np.max(np.abs(numpy_batched(K, r) - gaussian_log_likelihoods(K, r))))
        # each way on the same matrices; the compiled one copies them first, as by default
        t_np, t_c = (
            median_ms(f, (K, r), args.calls) for f in (numpy_batched, gaussian_log_likelihoods)
        )
        print(f"{case} | {t_np:.3f} | {t_c:.3f} | {t_c / t_np:.2f} | {diff:.1e}")


if __name__ == "__main__":
    main()
