"""A run's checkpoint: the file and the run's side of it.

* :mod:`~pp_decomp.loop.checkpoint.file`: the file's format (the results, the
  loop's state as JSON, the draw log), written atomically in two generations,
  locked against a second writer and checked on reading;
* :mod:`~pp_decomp.loop.checkpoint.resume`: opening a file for a run, deciding
  whether a resume continues the same run, and the loop state stored and restored;
* :mod:`~pp_decomp.loop.checkpoint.schedule`: when a run writes its file.

The names below are those of the three modules.
"""

from pp_decomp.loop.checkpoint.file import (
    AS_STORED,
    DRAWS,
    ENGINE,
    FORMAT_VERSION,
    GROUP,
    PREVIOUS,
    CheckpointError,
    FileLock,
    content_checksum,
    load,
    observations,
    previous,
    read,
    read_draws,
    remove_stale_temporaries,
    to_bytes,
    write,
)
from pp_decomp.loop.checkpoint.resume import (
    CheckpointFile,
    attach,
    check_resume,
    loop_state,
    named_as_stored,
    restore,
    stored_problem,
)
from pp_decomp.loop.checkpoint.schedule import SaveSchedule

__all__ = [
    "AS_STORED",
    "CheckpointError",
    "CheckpointFile",
    "DRAWS",
    "ENGINE",
    "FORMAT_VERSION",
    "FileLock",
    "GROUP",
    "PREVIOUS",
    "SaveSchedule",
    "attach",
    "check_resume",
    "content_checksum",
    "load",
    "loop_state",
    "named_as_stored",
    "observations",
    "previous",
    "read",
    "read_draws",
    "remove_stale_temporaries",
    "restore",
    "stored_problem",
    "to_bytes",
    "write",
]
