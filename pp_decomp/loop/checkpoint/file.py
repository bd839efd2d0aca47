"""Checkpoint files: a run's results plus the state that resumes it exactly.

A checkpoint is a netCDF-4 file (HDF5), written and read with netCDF4-python
(why not h5netcdf: docs/design.md, "Reproducibility and checkpoints"). Its root
group is the user-facing results Dataset (:func:`pp_decomp.results.build_dataset`); the group
``checkpoint`` holds the loop's state as JSON, a format version and a SHA-256
checksum of the state and the observations, apart from the results' attributes.

Files are safe by construction:

* written atomically: the file is built in memory, written to a temporary file
  in the same folder, fsynced and moved over the old one with ``os.replace``,
  so a kill or a full disk at any moment leaves the previous complete file;
  the temporary file is removed on failure (and stale ones of dead processes
  when the file is next opened);
* two generations: before the new file replaces ``NAME``, the current one is
  hard-linked as ``NAME.prev`` (:func:`previous`), so ``NAME`` exists at every
  moment and the write before the last survives damage to the newest file
  (a disk error, a program writing into it);
* one writer per file: :class:`FileLock` holds an exclusive ``flock`` on a
  hidden ``.NAME.lock`` beside it for as long as an optimiser writes there;
* checked on reading: a damaged, foreign or tampered file gives a
  :class:`CheckpointError` naming the file and what is wrong, whatever error
  HDF5, netCDF4 or xarray raised while opening it or loading its data (all of
  it is loaded while guarded, none lazily later). Where ``NAME.prev`` is
  intact, the error also names it, with its number of evaluations and how to
  continue from it. Nothing falls back to it by itself: the damaged file may
  hold evaluations the previous one lacks, so the user decides, and no data
  is ever dropped silently. A new run refuses a path whose ``NAME.prev`` is
  left without ``NAME`` (see :func:`pp_decomp.loop.checkpoint.resume.attach`).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import json
import os
import shutil
import sys
from pathlib import Path

import numpy as np
import xarray as xr

FORMAT_VERSION = 2
GROUP = "checkpoint"
DRAWS = "draws"  # the draw log's group
PREVIOUS = ".prev"  # suffix of the previous generation
# values as written: a user's unit that reads like a CF time ("days since ...") is
# not decoded into datetimes, which would change them (and their checksum)
AS_STORED = {"decode_times": False, "decode_timedelta": False}
ENGINE = "netcdf4"


class CheckpointError(ValueError):
    """A checkpoint file cannot be read, written or used as asked."""


def _checksum(state_json: str, X: np.ndarray, Y: np.ndarray) -> str:
    h = hashlib.sha256(state_json.encode())
    for arr in (X, Y):
        h.update(np.ascontiguousarray(arr, dtype=np.float64).tobytes())
    return h.hexdigest()


def content_checksum(results: xr.Dataset, draws: xr.Dataset | None) -> str:
    """SHA-256 of every variable's values in ``results`` and ``draws``, so that damage
    to data outside the observations and state (the derived results, the draw log)
    is found on reading too; values as they read back (numbers as float64, text as text)."""
    h = hashlib.sha256()
    for prefix, ds in (("results/", results), ("draws/", draws)):
        if ds is None:
            continue
        for name in sorted(map(str, ds.variables)):
            values = np.asarray(ds[name].values)
            h.update(f"{prefix}{name}{values.shape}".encode())
            if values.dtype.kind in "biuf":
                h.update(np.ascontiguousarray(values, dtype=np.float64).tobytes())
            else:
                h.update("\x00".join(map(str, values.ravel())).encode())
    return h.hexdigest()


def to_bytes(
    results: xr.Dataset, state: dict, draws: xr.Dataset | None = None, engine: str = ENGINE
) -> bytes:
    """The checkpoint file's bytes: ``results`` as the root group, ``state`` in
    ``checkpoint``, and the ``draws`` (:mod:`pp_decomp.loop.records`) in ``draws``;
    written by xarray's ``engine`` (any that writes groups into memory)."""
    state_json = json.dumps(state)
    X = np.asarray(results["x"].values, dtype=float)
    Y = np.asarray(results["y"].values, dtype=float)
    ck = xr.Dataset(
        {"state": ((), state_json)},
        attrs={
            "format_version": FORMAT_VERSION,
            "sha256": _checksum(state_json, X, Y),
            "content_sha256": content_checksum(results, draws),
        },
    )
    groups = {"/": results, f"/{GROUP}": ck}
    if draws is not None:
        groups[f"/{DRAWS}"] = draws
    with _local_writes():
        return bytes(xr.DataTree.from_dict(groups).to_netcdf(engine=engine))


def _local_writes():
    """Inside a Dask worker xarray would guard writes with a cluster-wide lock named
    after the file, which an in-memory buffer does not have: write synchronously."""
    if "dask" not in sys.modules:
        return contextlib.nullcontext()
    import dask

    return dask.config.set(scheduler="synchronous")


def write(path, results: xr.Dataset, state: dict, draws: xr.Dataset | None = None) -> None:
    """Write ``results``, the loop ``state`` and the ``draws`` (:func:`to_bytes`) to
    ``path`` atomically.

    Raises a :class:`CheckpointError` (the previous file intact, no temporary
    file left) when the disk is full or the folder cannot be written.
    """
    path = Path(path)
    data = to_bytes(results, state, draws)
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        _keep_previous(path)
        os.replace(tmp, path)
    except OSError as err:
        why = "the disk is full" if err.errno in (errno.ENOSPC, errno.EFBIG) else err.strerror
        raise CheckpointError(
            f"could not write checkpoint {str(path)!r}: {why}; the previous checkpoint "
            f"is intact and this run's evaluations are kept in memory ({err})"
        ) from err
    finally:
        tmp.unlink(missing_ok=True)


def previous(path) -> Path:
    """The previous generation of the checkpoint at ``path``: ``NAME.prev`` beside it."""
    path = Path(path)
    return path.with_name(path.name + PREVIOUS)


def _keep_previous(path: Path) -> None:
    """Make the current file at ``path`` (if any) its previous generation.

    A hard link, not a rename: ``path`` then exists at every moment, so a kill
    between this and the new file's ``os.replace`` leaves both generations.
    """
    if not path.is_file():
        return
    prev = previous(path)
    prev.unlink(missing_ok=True)
    try:
        os.link(path, prev)
    except OSError as err:
        if err.errno in (errno.ENOSPC, errno.EFBIG, errno.EDQUOT):
            raise
        shutil.copyfile(path, prev)  # a file system without hard links


def load(path, group: str | None = None) -> xr.Dataset:
    """The Dataset of ``group`` (default the root) at ``path``, loaded into memory.

    Every error while opening or loading it becomes a :class:`CheckpointError`
    naming the file: a damaged HDF5 file makes netCDF4 or xarray raise
    almost anything (OSError, RuntimeError, KeyError, AttributeError, ...).
    """
    try:
        with xr.open_dataset(path, engine=ENGINE, group=group, **AS_STORED) as ds:
            return ds.load()
    except Exception as err:  # the file's bytes, not our code, decide the error type
        raise CheckpointError(
            f"{str(path)!r} is not a readable pp_decomp checkpoint (damaged, truncated or "
            f"another kind of file): {type(err).__name__}: {err}"
        ) from err


def read(path) -> tuple[xr.Dataset, dict]:
    """The results Dataset and the loop state stored at ``path``, checked.

    An error names the file and, where its previous generation is intact, that
    one too (:func:`previous`)."""
    path = Path(path)
    try:
        return _read(path)
    except CheckpointError as err:
        raise CheckpointError(f"{err}{_previous_hint(path)}") from err


def _read(path: Path) -> tuple[xr.Dataset, dict]:
    if not path.exists():
        raise CheckpointError(f"checkpoint {str(path)!r} does not exist")
    if not path.is_file():
        raise CheckpointError(f"checkpoint {str(path)!r} is not a file")
    results = load(path)
    ck = load(path, GROUP)
    if "state" not in ck:
        raise CheckpointError(f"checkpoint {str(path)!r} has no loop state")
    state_json, attrs = str(ck["state"].values), dict(ck.attrs)
    version = int(attrs.get("format_version", -1))
    if version != FORMAT_VERSION:
        raise CheckpointError(
            f"checkpoint {str(path)!r} has format version {version}; this pp_decomp "
            f"reads version {FORMAT_VERSION}"
        )
    for key in ("x", "y"):
        if key not in results:
            raise CheckpointError(f"checkpoint {str(path)!r} has no {key!r} variable")
    X, Y = np.asarray(results["x"].values), np.asarray(results["y"].values)
    if attrs.get("sha256") != _checksum(state_json, X, Y):
        raise CheckpointError(
            f"checkpoint {str(path)!r} fails its checksum: it was changed after it was written"
        )
    _check_settings(path, results)
    _check_content(path, results, attrs)
    return results, json.loads(state_json)


def _check_content(path: Path, results: xr.Dataset, attrs: dict) -> None:
    """Every value of the file against its ``content_sha256`` (files written before
    it existed have none, and are checked by ``sha256`` alone)."""
    if "content_sha256" not in attrs:
        return
    draws = read_draws(path, hint=False)
    if attrs["content_sha256"] != content_checksum(results, draws):
        raise CheckpointError(
            f"checkpoint {str(path)!r} fails its checksum: its data were changed after it "
            "was written (damaged)"
        )


def _check_settings(path: Path, results: xr.Dataset) -> None:
    """The results' settings (outside the checksum) must be there and parse."""
    if "settings" not in results.attrs:
        raise CheckpointError(f"checkpoint {str(path)!r} has no 'settings' attribute")
    try:
        json.loads(results.attrs["settings"])
    except (TypeError, ValueError) as err:
        raise CheckpointError(
            f"checkpoint {str(path)!r}: its 'settings' attribute is damaged ({err})"
        ) from err


def _previous_hint(path: Path) -> str:
    """What the previous generation of ``path`` holds and how to continue from it;
    empty when there is none."""
    prev = previous(path)
    if not prev.is_file():
        return ""
    try:
        results, _ = _read(prev)
    except CheckpointError as err:
        return f". Its previous generation cannot be read either: {err}"
    n = results.sizes.get("iteration", 0)
    return (
        f". The previous checkpoint {str(prev)!r} is intact and holds {n} evaluation(s) "
        f"(any told after them are in the damaged file only): to continue from it, move "
        f"the damaged file aside and the previous one in its place (mv {str(path)!r} "
        f"{str(path) + '.damaged'!r}; mv {str(prev)!r} {str(path)!r}) and resume, or "
        f"resume {str(prev)!r} where it is"
    )


def read_draws(path, hint: bool = True) -> xr.Dataset | None:
    """The draw log stored at ``path`` (:mod:`pp_decomp.loop.records`); ``None`` for
    a file written without one. ``hint``: an error names the previous generation."""
    path = Path(path)
    try:
        with xr.open_dataset(path, engine=ENGINE, group=DRAWS, **AS_STORED) as ds:
            return ds.load()
    except OSError as err:
        if "group not found" in str(err):
            return None
        cause = err
    except Exception as err:  # a damaged file: any error of netCDF4 or xarray
        cause = err
    raise CheckpointError(
        f"checkpoint {str(path)!r}: its draws cannot be read ({type(cause).__name__}: "
        f"{cause}){_previous_hint(path) if hint else ''}"
    ) from cause


def observations(results: xr.Dataset, dim: int, n_components: int):
    """The stored inputs ``X (n, d)`` and components ``Y (n, J)``."""
    X = np.asarray(results["x"].values, dtype=float).reshape(-1, dim)
    Y = np.asarray(results["y"].values, dtype=float).reshape(-1, n_components)
    return X, Y


def remove_stale_temporaries(path) -> None:
    """Delete ``.NAME.tmpPID`` files of ``path`` left by processes that no longer run."""
    path = Path(path)
    for tmp in path.parent.glob(f".{path.name}.tmp*"):
        pid = tmp.name.rsplit(".tmp", 1)[-1]
        if pid.isdigit() and not _alive(int(pid)):
            tmp.unlink(missing_ok=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


_HELD: dict = {}  # path -> the FileLock that holds it in this process


class FileLock:
    """An exclusive lock on ``path`` (one writer per checkpoint), held until :meth:`release`.

    The lock is an ``flock`` on the hidden file ``.NAME.lock`` beside ``path``;
    the kernel releases it when the process dies, so a killed run never blocks
    its own resume. Another process is refused. Within one process the newest
    lock takes the file over (a notebook that reopens a run while the old
    optimiser object still exists): the old one is marked :attr:`taken_over`
    and its writer stops writing.
    """

    def __init__(self, path):
        self.path = Path(path)
        self.lock_path = self.path.with_name(f".{self.path.name}.lock")
        self.taken_over = False
        key = str(self.lock_path.resolve())
        old = _HELD.get(key)
        if old is not None and not old.released:
            self._fh, old._fh, old.taken_over = old._fh, None, True
        else:
            self._fh = self._acquire()
        _HELD[key] = self

    @property
    def released(self) -> bool:
        return self._fh is None or self._fh.closed

    def _acquire(self):
        self.lock_path.parent.mkdir(parents=True, exist_ok=True)
        for _ in range(5):  # the file may be unlinked by its releasing holder meanwhile
            fh = open(self.lock_path, "a+")  # noqa: SIM115 (held for the lock's life)
            try:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as err:
                fh.seek(0)
                owner = fh.read().strip() or "another"
                fh.close()
                raise CheckpointError(
                    f"checkpoint {str(self.path)!r} is being written by process {owner}; "
                    "one optimiser per file (give another checkpoint path)"
                ) from err
            same = self.lock_path.exists() and (
                os.stat(self.lock_path).st_ino == os.fstat(fh.fileno()).st_ino
            )
            if same:
                fh.seek(0)
                fh.truncate()
                fh.write(str(os.getpid()))
                fh.flush()
                return fh
            fh.close()
        raise CheckpointError(f"could not lock checkpoint {str(self.path)!r}")

    def release(self) -> None:
        """Release the lock and remove its file (nothing if it was taken over)."""
        if not self.released:
            self.lock_path.unlink(missing_ok=True)
            fcntl.flock(self._fh, fcntl.LOCK_UN)
            self._fh.close()
        self._fh = None

    def __del__(self):
        try:
            self.release()
        except Exception:  # interpreter shutdown: the kernel releases the lock anyway
            pass
