"""A run's side of its checkpoint: opening the file for writing, deciding whether a
resume continues the same run, and the loop's state stored in it and restored from it."""

from __future__ import annotations

import itertools
import json
import math
import os
from pathlib import Path

from pp_decomp.kernels import Kernel
from pp_decomp.loop.checkpoint.file import (
    CheckpointError,
    FileLock,
    observations,
    previous,
    remove_stale_temporaries,
)
from pp_decomp.loop.records import DrawLog, jsonable
from pp_decomp.loop.settings import RunSettings
from pp_decomp.loop.setup import RunSetup
from pp_decomp.loop.state import LoopState
from pp_decomp.loop.updaters import Updater, loop_data
from pp_decomp.strategies import STRATEGIES


class CheckpointFile:
    """A checkpoint path held for writing: its lock, and the backup of a run it replaces."""

    def __init__(self, path: Path, backup: Path | None):
        self.path, self.backup = path, backup
        self.stale_previous = False  # NAME.prev is the replaced run's, not this one's
        self.lock = FileLock(path)

    def check_writable(self) -> None:
        """Raise if a newer optimiser in this process took the file over."""
        if self.lock.taken_over:
            raise CheckpointError(
                f"checkpoint {str(self.path)!r} was reopened by another optimiser in this "
                "process (Optimizer.resume or open); this one no longer writes it"
            )

    def first_written(self) -> None:
        """The new run's file exists: the replaced run's backup and previous generation
        can go."""
        if self.backup is not None:
            self.backup.unlink(missing_ok=True)
            self.backup = None
        if self.stale_previous:
            previous(self.path).unlink(missing_ok=True)
            self.stale_previous = False

    def release(self) -> None:
        """Release the lock."""
        self.lock.release()


def attach(path, fresh: bool, overwrite: bool = False) -> CheckpointFile:
    """Lock ``path`` for writing. A fresh run refuses an existing file, or a previous
    generation ``NAME.prev`` left without it, unless ``overwrite``; then the old file
    is kept as ``.NAME.bak`` (and ``NAME.prev`` as it is) until the first write."""
    path = Path(path)
    if path.is_dir():
        raise CheckpointError(f"checkpoint {str(path)!r} is a directory; give a file path")
    if fresh and path.exists() and not overwrite:
        raise CheckpointError(
            f"checkpoint {str(path)!r} already holds a run: continue it with "
            "Optimizer.resume(path, problem) (or Optimizer.open), or pass overwrite=True "
            "to replace it"
        )
    if fresh and previous(path).exists() and not overwrite:
        raise CheckpointError(
            f"checkpoint {str(path)!r} does not exist but its previous generation "
            f"{str(previous(path))!r} does: move it to {str(path)!r} and resume the run, or "
            "pass overwrite=True to start a new run there"
        )
    held = CheckpointFile(path, None)  # the lock first: a running writer keeps its file
    remove_stale_temporaries(path)
    if fresh and path.exists():
        held.backup = path.with_name(f".{path.name}.bak")
        os.replace(path, held.backup)
    # the replaced run's previous generation goes with its backup, at the first write
    held.stale_previous = fresh and previous(path).exists()
    return held


def stored_problem(stored: dict) -> str | None:
    """The name of the problem a run was made on, from its stored settings."""
    return (stored.get("problem_fingerprint") or {}).get("name", stored.get("problem"))


def named_as_stored(path, results, problem):
    """``problem`` with the input names the run in ``results`` stored (a problem given
    without names takes them; one given other names is refused, naming both)."""
    if "input_name" not in results.coords:  # a file from before inputs had names
        return problem
    stored = [str(n) for n in results["input_name"].values]
    return problem.with_input_names(stored, where=f"checkpoint {str(path)!r}")


def check_resume(path, results, problem, expected: dict, beta) -> dict:
    """The keyword arguments that rebuild the stored run, or a ValueError naming what
    differs: the problem instance (name, dimension, J, domain, instance seed where both
    record one) or any setting in ``expected``."""
    stored = json.loads(results.attrs["settings"])
    where = f"checkpoint {str(path)!r}"
    fp = stored.get("problem_fingerprint")
    held = stored_problem(stored)
    if held is not None and held != problem.name:
        raise ValueError(f"{where} holds a run of problem {held!r}; {problem.name!r} was given")
    if fp is not None:
        mine = json.loads(json.dumps(problem.fingerprint()))
        bad = [k for k in fp if _differs(k, fp[k], mine.get(k))]
        if bad:
            diff = "; ".join(f"{k}: file {fp[k]!r}, given {mine.get(k)!r}" for k in bad)
            raise ValueError(f"{where} was run on another problem instance ({diff})")
    kwargs = RunSettings.kwargs_from_dict(stored)
    if kwargs.get("strategy") not in STRATEGIES:  # a user's own Strategy: given again
        given = expected.get("strategy")
        if getattr(given, "name", None) != kwargs["strategy"]:
            raise ValueError(
                f"{where} holds a run of the user strategy {kwargs['strategy']!r}; pass the "
                "same Strategy object as strategy= to resume it"
            )
        kwargs["strategy"] = given
    if beta is not None:
        kwargs["beta"] = beta
    stored_models = kwargs.get("components") or {}
    own = {n: m["pymc"] for n, m in stored_models.items() if isinstance(m, dict)}
    if own:  # a user's PyMC model is the user's code: given again, checked against the file
        if "components" not in expected:
            raise ValueError(
                f"{where} holds a run whose component(s) {sorted(own)} have their own PyMC "
                f"models ({own}); pass the same components= to resume it"
            )
        kwargs["components"] = expected["components"]
    asked = {**kwargs, **expected}
    if "copula" not in expected and asked["strategy"] != kwargs["strategy"]:
        asked["copula"] = None  # the file's copula was its strategy's default
    given = RunSettings.build(problem, **asked).to_dict() if expected else {}
    want = RunSettings.build(problem, **kwargs).to_dict()
    want["components"] = stored.get("components", {})  # the file's models, as recorded
    if "components" in given:
        given["components"] = _scripts_as_recorded(given["components"], want["components"])
    bad = [k for k in given if given[k] != want[k]]
    if bad:
        diff = "; ".join(
            _models_differ(want[k], given[k])
            if k == "components"
            else f"{k}: file {want[k]!r}, asked {given[k]!r}"
            for k in bad
        )
        raise ValueError(f"{where} holds a run with other settings ({diff})")
    return kwargs


# seen: 6.8e-7 between two machines' synthetic instances (BLAS on another CPU)
OPTIMUM_RTOL = 1e-5


def _differs(key: str, stored, given) -> bool:
    """Whether a problem fingerprint's entry ``key`` differs between a file and the problem
    given. The instance seed counts only where both record one: a problem made in Python
    has none (``None``), a factory's through :func:`~pp_decomp.models.get_problem` has one.

    The optimum counts to 1e-5 relative: a sampled instance's last bits
    differ across BLAS builds and CPUs, and a nearly singular sampling factor
    (synthetic's GP samples on 1000 points) carries them to 1e-6.

    >>> _differs("instance", None, 0), _differs("instance", 1, 2), _differs("dim", 1, 2)
    (False, True, True)
    >>> _differs("optimum", 4.98810407821753, 4.988107491669682), _differs("optimum", 4.99, 4.98)
    (False, True)
    """
    if key == "instance" and (stored is None or given is None):
        return False
    if key == "optimum" and stored is not None and given is not None:
        return not math.isclose(stored, given, rel_tol=OPTIMUM_RTOL)
    return stored != given


def loop_state(state: LoopState, updater: Updater | None) -> dict:
    """The loop's state beside its results in a checkpoint; :func:`restore` reads it."""
    return {
        "gamma": state.gamma,
        "records": [jsonable(r) for r in state.records],
        "failures": state.failures.state(),
        "pending": state.pending.state(),
        "nodes": state.nodes.state(),
        "updater": {} if updater is None else jsonable(updater.state()),
    }


def restore(
    setup: RunSetup, state: LoopState, updater: Updater | None, results, stored: dict, draws=None
) -> DrawLog:
    """Put a checkpoint's observations and loop state (``stored``, from ``results``)
    into a fresh run's ``state`` and ``updater``; return its draw log (from ``draws``,
    the group :func:`~pp_decomp.loop.checkpoint.read_draws` gives)."""
    p = setup.problem
    state.X, state.Y = observations(results, p.dim, p.n_components)
    state.gamma = float(stored["gamma"])
    state.records = stored["records"]
    state.failures.restore(stored.get("failures", {}))
    state.pending.restore(stored.get("pending", []))
    state.nodes.restore(stored.get("nodes", {}))
    if updater is not None:
        updater.restore(stored["updater"], loop_data(setup, state))
    return DrawLog.from_dataset(draws)


def _scripts_as_recorded(asked: dict, stored: dict) -> dict:
    """``asked``'s models, each named as the file records it where that name is a
    script's, ``__main__.NAME``, and ``asked``'s the same build imported,
    ``MODULE.NAME`` (files written before a script's build was named by its
    module), and the models are otherwise the same."""
    out = dict(asked)
    for n, model in asked.items():
        held = stored.get(n)
        if isinstance(model, dict) and isinstance(held, dict):
            if _same_build(model.get("pymc"), held.get("pymc")):
                if {**model, "pymc": held["pymc"]} == held:
                    out[n] = held
    return out


def _same_build(a, b) -> bool:
    """Whether two recorded build names are one build: equal, or one is a script's
    ``__main__.NAME`` and the other ``MODULE.NAME`` of a top-level module."""
    if not (isinstance(a, str) and isinstance(b, str)):
        return False
    return a == b or _script_of(a, b) or _script_of(b, a)


def _script_of(a: str, b: str) -> bool:
    main = "__main__."
    if not a.startswith(main):
        return False
    module, dot, name = b.partition(".")
    return bool(dot) and name == a[len(main) :] and module != "__main__"


def _models_differ(stored: dict, asked: dict) -> str:
    """Which components' models differ between a file's settings and the ones asked for."""

    def show(model):
        if model is None:
            return "the default model"
        if "pymc" in model:
            return f"PyMC model {model['pymc']}"
        return repr(Kernel.from_dict(model["kernel"]))

    names = [n for n in dict.fromkeys([*stored, *asked]) if stored.get(n) != asked.get(n)]
    return "; ".join(
        f"component {n!r}'s model: file {show(stored.get(n))} {_extras(stored.get(n))}, "
        f"asked {show(asked.get(n))} {_extras(asked.get(n))}"
        + _description_differs(stored.get(n), asked.get(n))
        for n in names
    )


def _description_differs(stored, asked) -> str:
    """Where two PyMC models of one name differ: the first line of their
    descriptions (``pm.Model.str_repr``) that does."""
    if not (isinstance(stored, dict) and isinstance(asked, dict)):
        return ""
    a, b = stored.get("model"), asked.get("model")
    if not (a and b) or a == b or not _same_build(stored.get("pymc"), asked.get("pymc")):
        return ""
    # str_repr pads every name to the longest: compare the lines' words
    lines = [[" ".join(line.split()) for line in m.splitlines()] for m in (a, b)]
    pairs = itertools.zip_longest(*lines, fillvalue="(no line)")
    first = next((p for p in pairs if p[0] != p[1]), ("(none)", "(none)"))
    return f", whose models differ: file {first[0]!r}, asked {first[1]!r}"


def _extras(model) -> str:
    if model is None:
        return ""
    if "pymc" in model:
        return f"(transform {model['transform']!r})"
    return f"(noise {model['noise']}, transform {model['transform']!r})"
