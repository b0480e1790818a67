"""Files written whole or not at all: the shared objects, checkpoints,
tuning and calibration files and the compile cache all replace their
target by renaming a complete temporary file over it, so a reader (or a
process with the old file loaded) never sees half a file, and a failed
write leaves nothing behind."""

import contextlib
import os
import pathlib
import tempfile

__all__ = ["atomic_writer"]


@contextlib.contextmanager
def atomic_writer(path, mode="wb", permissions=None):
    """A file opened in `mode` ("wb" or "w") whose contents replace `path`
    when the `with` block ends without an error: a temporary file in the
    same directory (created if missing), flushed to disk, then renamed
    over `path`. On an error the temporary is removed and `path` is left
    as it was. `permissions`: the file's mode bits (e.g. 0o755)."""
    path = pathlib.Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent,
                                         prefix="." + path.name + ".",
                                         suffix=".tmp")
    try:
        with os.fdopen(handle, mode) as out:
            yield out
            out.flush()
            os.fsync(out.fileno())
        if permissions is not None:
            os.chmod(temporary, permissions)
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise
