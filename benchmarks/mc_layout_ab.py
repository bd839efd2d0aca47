"""The Monte Carlo bound's samples and perceived temperature's g, before and after
they were stored component-major and g stopped stacking (T, RH, wind) again.

Usage: python benchmarks/mc_layout_ab.py

Both forms run alternately in one process on each day's stations (components at
their readings, standard deviations 2, 2 and 1 in their units, 512 samples, the
bound's ~1 MB blocks, one hyperparameter draw as under MAP); prints the mean time
of a whole bound and whether the two forms gave the same values.
"""

from __future__ import annotations

import os
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402


def interleaved_samples(per_draw, draw_idx, z):
    """The samples as before: an ``(n, m, J)`` array, components interleaved."""
    out = np.empty((len(z), per_draw[0][0].shape[1], len(per_draw)))
    for j, (mean_s, var_s) in enumerate(per_draw):
        out[..., j] = mean_s[0] + np.sqrt(var_s)[0] * z[:, j : j + 1]
    return out


def stacked_g(F, X=None):
    """Perceived temperature of (T, dew point, wind) as before: RH stacked back into F."""
    from pp_decomp.models.perceived_temperature import perceived_nws, relative_humidity

    F = np.asarray(F, dtype=float)
    rh = relative_humidity(F[..., 0], F[..., 1])
    return perceived_nws(np.stack([F[..., 0], rh, F[..., 2]], axis=-1))


def bound(samples, g, per_draw, z, X) -> np.ndarray:
    from pp_decomp.acquisition.ucb import high_quantile, mc_block_rows

    m, rows = len(X), mc_block_rows(z)
    idx = np.zeros(z.shape, dtype=int)
    out = np.empty(m)
    for start in range(0, m, rows):
        sl = slice(start, min(m, start + rows))
        F = samples([(mu[:, sl], v[:, sl]) for mu, v in per_draw], idx, z)
        out[sl] = high_quantile(g(F, X[sl]), 0.9999, overwrite_input=True)
    return out


def main() -> None:
    from pp_decomp.acquisition.surrogate import DecomposedSurrogate
    from pp_decomp.models import get_problem

    for name in ("perceived-temperature", "perceived-temperature-july"):
        problem = get_problem(name, seed=0)
        X = problem.domain.X
        F0 = problem.components(X)
        sd = (2.0, 2.0, 1.0)
        per_draw = [(F0[:, j][None], np.full((1, len(X)), s**2)) for j, s in enumerate(sd)]
        z = np.random.default_rng(0).standard_normal((512, 3))
        forms = {
            "before": (interleaved_samples, stacked_g),
            "after": (DecomposedSurrogate._samples, problem.compose),
        }
        times, values = {k: [] for k in forms}, {}
        for _ in range(2):
            for key, (samples, g) in forms.items():
                bound(samples, g, per_draw, z, X)  # warm-up
                start = time.perf_counter()
                for _ in range(10):
                    values[key] = bound(samples, g, per_draw, z, X)
                times[key].append((time.perf_counter() - start) / 10 * 1e3)
        b, a = np.mean(times["before"]), np.mean(times["after"])
        same = np.array_equal(values["before"], values["after"])
        print(
            f"{name}: {len(X)} stations, the bound before {b:.1f} ms, after {a:.1f} ms "
            f"(x {a / b:.2f}), same values: {same}"
        )


if __name__ == "__main__":
    main()
