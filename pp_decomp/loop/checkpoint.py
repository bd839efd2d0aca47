"""Checkpoint files: a run's results plus the state that resumes it exactly.

A checkpoint is a netCDF file (HDF5, via h5netcdf). Its root group is the
user-facing results Dataset (:func:`pp_decomp.results.build_dataset`); the group
``checkpoint`` holds the loop's state as JSON, a format version and a SHA-256
checksum of the state and the observations, apart from the results' attributes.

Files are safe by construction:

* written atomically: the file is built in memory, written to a temporary file
  in the same folder, fsynced and moved over the old one with ``os.replace``,
  so a kill or a full disk at any moment leaves the previous complete file;
  the temporary file is removed on failure (and stale ones of dead processes
  when the file is next opened);
* one writer per file: :class:`FileLock` holds an exclusive ``flock`` on a
  hidden ``.NAME.lock`` beside it for as long as an optimiser writes there;
* checked on reading: a damaged, foreign or tampered file gives a
  :class:`CheckpointError` naming the file and what is wrong.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import io
import json
import os
import sys
from pathlib import Path

import numpy as np
import xarray as xr

FORMAT_VERSION = 2
GROUP = "checkpoint"
DRAWS = "draws"  # the draw log's group


class CheckpointError(ValueError):
    """A checkpoint file cannot be read, written or used as asked."""


def _checksum(state_json: str, X: np.ndarray, Y: np.ndarray) -> str:
    h = hashlib.sha256(state_json.encode())
    for arr in (X, Y):
        h.update(np.ascontiguousarray(arr, dtype=np.float64).tobytes())
    return h.hexdigest()


def to_bytes(results: xr.Dataset, state: dict, draws: xr.Dataset | None = None) -> bytes:
    """The checkpoint file's bytes: ``results`` as the root group, ``state`` in
    ``checkpoint``, and the ``draws`` (:mod:`pp_decomp.loop.draw_log`) in ``draws``."""
    state_json = json.dumps(state)
    X = np.asarray(results["x"].values, dtype=float)
    Y = np.asarray(results["y"].values, dtype=float)
    ck = xr.Dataset(
        {"state": ((), state_json)},
        attrs={"format_version": FORMAT_VERSION, "sha256": _checksum(state_json, X, Y)},
    )
    buf = io.BytesIO()
    with _local_writes():
        results.to_netcdf(buf, engine="h5netcdf")
        ck.to_netcdf(buf, mode="a", group=GROUP, engine="h5netcdf")
        if draws is not None:
            draws.to_netcdf(buf, mode="a", group=DRAWS, engine="h5netcdf")
    return buf.getvalue()


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
        os.replace(tmp, path)
    except OSError as err:
        why = "the disk is full" if err.errno in (errno.ENOSPC, errno.EFBIG) else err.strerror
        raise CheckpointError(
            f"could not write checkpoint {str(path)!r}: {why}; the previous checkpoint "
            f"is intact and this run's evaluations are kept in memory ({err})"
        ) from err
    finally:
        tmp.unlink(missing_ok=True)


def read(path) -> tuple[xr.Dataset, dict]:
    """The results Dataset and the loop state stored at ``path``, checked."""
    path = Path(path)
    if not path.exists():
        raise CheckpointError(f"checkpoint {str(path)!r} does not exist")
    if not path.is_file():
        raise CheckpointError(f"checkpoint {str(path)!r} is not a file")
    try:
        with xr.open_dataset(path, engine="h5netcdf") as ds:
            results = ds.load()
        with xr.open_dataset(path, engine="h5netcdf", group=GROUP) as ck:
            state_json = str(ck["state"].values)
            attrs = dict(ck.attrs)
    except (OSError, KeyError, ValueError) as err:
        raise CheckpointError(
            f"{str(path)!r} is not a readable pp_decomp checkpoint (damaged, truncated or "
            f"another kind of file): {err}"
        ) from err
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
    if "settings" not in results.attrs:
        raise CheckpointError(f"checkpoint {str(path)!r} has no 'settings' attribute")
    return results, json.loads(state_json)


def read_draws(path) -> xr.Dataset | None:
    """The draw log stored at ``path`` (:mod:`pp_decomp.loop.draw_log`); ``None`` for
    a file written without one."""
    try:
        with xr.open_dataset(path, engine="h5netcdf", group=DRAWS) as ds:
            return ds.load()
    except OSError as err:
        if "group not found" in str(err):
            return None
        raise CheckpointError(
            f"checkpoint {str(path)!r}: its draws cannot be read ({err})"
        ) from err


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
