"""Products of the draws' lower-triangular factors with cross-covariances: BLAS's
triangular product (``pp_decomp.components.posterior.triangular``) against
``np.matmul`` on the same blocks of a buffer with spare rows, as the fast path
holds them.

Usage: python benchmarks/speed/triangular_speed.py [--cases 1000x32x5,300x128x5,...]
       [--calls 5]

Each case is ``n x S x m`` (points, draws, inputs). Prints the median
milliseconds of one product of every draw by each way, their ratio and the
largest relative difference, one line per case.
"""

from __future__ import annotations

import argparse
import os

for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import time  # noqa: E402

import numpy as np  # noqa: E402

from pp_decomp.components.posterior.triangular import lower_times  # noqa: E402

CASES = ",".join(
    ["30x128x5", "100x128x1", "100x128x5", "100x128x40", "300x128x1", "300x128x5"]
    + ["300x128x40", "1000x32x1", "1000x32x5", "1000x32x40", "1000x32x200"]
)


def matmul(buf, keep, n, K) -> np.ndarray:
    out = np.empty(K.shape)
    for k, s in enumerate(keep):
        np.matmul(buf[s, :n, :n], K[k], out=out[k])
    return out


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
    print("n x S x m | matmul ms | triangular ms | triangular / matmul | max rel diff")
    for case in args.cases.split(","):
        n, S, m = (int(v) for v in case.split("x"))
        buf = np.zeros((S, n + 16, n + 16))  # spare rows, as the fast path's buffer
        for s in range(S):
            buf[s, :n, :n] = np.tril(rng.normal(size=(n, n)))
        keep, K = np.arange(S), rng.normal(size=(S, n, m))
        a, b = matmul(buf, keep, n, K), lower_times(buf, keep, n, K)
        diff = float(np.max(np.abs(a - b)) / np.max(np.abs(a)))
        t_mat, t_tri = (median_ms(f, (buf, keep, n, K), args.calls) for f in (matmul, lower_times))
        print(f"{case} | {t_mat:.3f} | {t_tri:.3f} | {t_tri / t_mat:.2f} | {diff:.1e}")


if __name__ == "__main__":
    main()
