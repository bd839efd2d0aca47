"""What a checkpointed run's writes cost: per writer, with and without the draws.

Usage: python benchmarks/speed/checkpoint_cost.py [--steps 100] [--inference nuts]
       [--repeats 5] [--engines netcdf4,h5netcdf]

Runs D-GPUCB on Wang's synthetic problem (J = 10) for ``--steps`` evaluations,
then builds the checkpoint file's bytes (:func:`pp_decomp.loop.checkpoint.to_bytes`,
what every ``ask`` and ``tell`` writes) with each of xarray's ``--engines``, with
and without the draw log (:mod:`pp_decomp.loop.records`), all alternately,
``--repeats`` times each; reads each file back (its three groups, as a resume
does) with the engine that wrote it. Prints the median seconds and the size.
"""

from __future__ import annotations

import argparse
import os

for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import tempfile  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import xarray as xr  # noqa: E402


def measure(steps: int, inference: str, repeats: int, engines, seed: int = 0) -> list[dict]:
    """Per engine and with/without the draws: median seconds of one write and one read
    back, and the file's bytes."""
    import pp_decomp as ppd
    from pp_decomp.loop import checkpoint as ckpt
    from pp_decomp.loop.checkpoint import loop_state
    from pp_decomp.models import get_problem

    warnings.simplefilter("ignore")  # a fit's diagnostics are in the results
    problem = get_problem("synthetic", seed=seed)
    opt = ppd.Optimizer(problem, "d-gpucb", inference=inference, seed=seed)
    opt.run(steps)
    results, state = opt.results(), loop_state(opt.state, opt.updater)
    draws = opt.draw_log.to_dataset(opt.records)
    cases = [(e, label, d) for e in engines for label, d in (("without", None), ("with", draws))]
    times = {c[:2]: ([], []) for c in cases}
    size = {}
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "run.nc"
        for _ in range(repeats):
            for engine, label, d in cases:
                start = time.perf_counter()
                data = ckpt.to_bytes(results, state, d, engine=engine)
                times[engine, label][0].append(time.perf_counter() - start)
                size[engine, label] = len(data)
                path.write_bytes(data)
                start = time.perf_counter()
                for group in (None, ckpt.GROUP) + ((ckpt.DRAWS,) if d is not None else ()):
                    xr.load_dataset(path, engine=engine, group=group, **ckpt.AS_STORED)
                times[engine, label][1].append(time.perf_counter() - start)
    return [
        {
            "steps": steps,
            "J": problem.n_components,
            "inference": inference,
            "engine": engine,
            "draws": label,
            "bytes": size[engine, label],
            "write_seconds": float(np.median(times[engine, label][0])),
            "read_seconds": float(np.median(times[engine, label][1])),
        }
        for engine, label, _ in cases
    ]


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--inference", default="nuts")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--engines", default="netcdf4,h5netcdf")
    a = ap.parse_args(argv)
    for r in measure(a.steps, a.inference, a.repeats, a.engines.split(",")):
        print(
            f"T={r['steps']} J={r['J']} {r['inference']} {r['engine']}: checkpoint "
            f"{r['draws']} draws: write {r['write_seconds']:.3f} s, read "
            f"{r['read_seconds']:.3f} s, {r['bytes'] / 1e6:.2f} MB"
        )


if __name__ == "__main__":
    main()
