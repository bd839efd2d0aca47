"""The walk of one ``Optimizer.ask()``: which package modules it crosses and
where it calls back into ``Optimizer``.

Runs ``--problem`` (default ``flu``: d-gpucb, MAP, a 5-D box with a budget) past
its initial design, then profiles one ``ask()`` and prints:

* the package modules with a frame during the ask (all, and without what sits
  behind the GP interface: ``components/``, ``kernels/``, ``prior``);
* every call into ``loop/optimizer.py`` from another module (a climb back up).

Usage: ``python benchmarks/reports/ask_walk.py [--problem flu] [--n-told 8] [--checkpoint]``.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections import Counter
from pathlib import Path

import pp_decomp as ppd
from pp_decomp.models import get_problem

PACKAGE = Path(ppd.__file__).parent
BEHIND_GP = ("components/", "kernels/", "prior.py")


def _module(filename: str) -> str | None:
    path = Path(filename)
    if PACKAGE not in path.parents:
        return None
    return path.relative_to(PACKAGE).as_posix()


def walk(opt: ppd.Optimizer) -> tuple[list[str], Counter]:
    """The modules one ``opt.ask()`` crosses, in first-visit order, and the
    callbacks into the optimiser's module by (caller, callee)."""
    seen: dict[str, None] = {}
    callbacks: Counter = Counter()

    def profile(frame, event, arg):
        if event != "call":
            return
        mod = _module(frame.f_code.co_filename)
        if mod is None:
            return
        seen.setdefault(mod, None)
        caller = frame.f_back
        cmod = None if caller is None else _module(caller.f_code.co_filename)
        if mod == "loop/optimizer.py" and cmod not in (None, "loop/optimizer.py"):
            callbacks[(f"{cmod}:{caller.f_code.co_name}", frame.f_code.co_name)] += 1

    sys.setprofile(profile)
    try:
        opt.ask()
    finally:
        sys.setprofile(None)
    seen.pop("loop/optimizer.py", None)
    return ["loop/optimizer.py", *seen], callbacks


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problem", default="flu")
    parser.add_argument("--n-told", type=int, default=8)
    parser.add_argument("--checkpoint", action="store_true")
    args = parser.parse_args(argv)
    problem = get_problem(args.problem, seed=0)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "run.nc" if args.checkpoint else None
        opt = ppd.Optimizer(problem, "d-gpucb", inference="map", n_init=5, seed=0, checkpoint=path)
        opt.run(args.n_told)
        modules, callbacks = walk(opt)
        opt.close()
    core = [m for m in modules if not m.startswith(BEHIND_GP)]
    print(f"modules crossed: {len(modules)} (without the GP internals: {len(core)})")
    for m in core:
        print(f"  {m}")
    print(f"calls back into Optimizer: {sum(callbacks.values())}")
    for (caller, callee), k in sorted(callbacks.items()):
        print(f"  {caller} -> Optimizer.{callee} x{k}")


if __name__ == "__main__":
    main()
