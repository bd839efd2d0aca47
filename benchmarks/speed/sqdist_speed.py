"""Scaled squared distances taken per draw (scipy's ``cdist``) against one batched
matrix product of the squared differences: which is faster at which sizes.

Usage: python benchmarks/speed/sqdist_speed.py [--cases 1024x80x110x1,8x30x4x128,...]
       [--calls 5]

Each case is ``n1 x n2 x d x S`` (inputs, training points, dimensions, draws).
Both ways compute ``Σ_d (X1_d - X2_d)² / ℓ_sd²`` for every draw ``s``
(``pp_decomp.kernels.builtin.scaled_sqdist`` takes the first up to
``PER_DRAW_UP_TO`` draws, the second beyond). Prints the median milliseconds per
call of each, their ratio and the largest relative difference, one line per case.
"""

from __future__ import annotations

import argparse
import os

for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import time  # noqa: E402

import numpy as np  # noqa: E402
from scipy.spatial.distance import cdist  # noqa: E402

CASES = "1024x80x110x1,8x80x110x1,1024x80x5x1,1024x30x4x128,8x30x4x128,1024x200x4x16,8x1000x4x16"


def per_draw(X1, X2, ls) -> np.ndarray:
    return np.stack([cdist(X1 / scale, X2 / scale, "sqeuclidean") for scale in ls])


def batched(X1, X2, ls) -> np.ndarray:
    diff2 = (X1[:, None, :] - X2[None, :, :]) ** 2
    n1, n2, d = diff2.shape
    return ((1.0 / ls**2) @ diff2.reshape(n1 * n2, d).T).reshape(len(ls), n1, n2)


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
    print("n1 x n2 x d x S | per draw ms | batched ms | per draw / batched | max rel diff")
    for case in args.cases.split(","):
        n1, n2, d, S = (int(v) for v in case.split("x"))
        X1, X2 = rng.uniform(size=(n1, d)), rng.uniform(size=(n2, d))
        ls = rng.uniform(0.3, 2.0, size=(S, d))
        a, b = per_draw(X1, X2, ls), batched(X1, X2, ls)
        diff = float(np.abs(a - b).max() / np.abs(b).max())
        t_draw, t_batch = (median_ms(f, (X1, X2, ls), args.calls) for f in (per_draw, batched))
        print(f"{case} | {t_draw:.2f} | {t_batch:.2f} | {t_draw / t_batch:.2f} | {diff:.1e}")


if __name__ == "__main__":
    main()
