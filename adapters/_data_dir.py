"""Is the data directory usable? Writable, with room to write (readiness and start-up).

The embedded store and the default decision log live under ``MIRAGE_DATA_DIR``. When it turns
read-only or fills up, writes fail one by one (502) while the process looks healthy, and files
mapped into memory can take the process down with SIGBUS. :func:`data_dir_problem` finds this
first: the sidecar refuses to start on such a directory (with one clear log line) and ``/readyz``
answers 503 while it lasts.
"""

from __future__ import annotations

import os
import shutil
import uuid
from pathlib import Path

from mirage_guard.guard.errors import ConfigError

_PROBE_BYTES = 4096
_MAX_FILES_CHECKED = 2000


# what a sidecar logs (CRITICAL) when it refuses to start on an unusable data directory
CANNOT_START = "mirage sidecar cannot start: %s (MIRAGE_DATA_DIR)"


def data_dir_problem(data_dir: Path, *, min_free_bytes: int) -> str | None:
    """Why ``data_dir`` cannot take writes (None when it can): not a directory, not writable,
    a read-only file inside it, or less than ``min_free_bytes`` free."""
    path = Path(data_dir)
    try:
        path.mkdir(parents=True, exist_ok=True)
        probe = path / f".mirage-write-probe-{uuid.uuid4().hex}"
        fd = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            os.write(fd, b"\0" * _PROBE_BYTES)
            os.fsync(fd)
        finally:
            os.close(fd)
            probe.unlink(missing_ok=True)
    except OSError as exc:
        return f"cannot write to {path}: {exc.strerror or type(exc).__name__}"
    for i, f in enumerate(p for p in path.rglob("*") if p.is_file()):
        if i >= _MAX_FILES_CHECKED:
            break
        if not os.access(f, os.W_OK):
            return f"read-only file in the data dir: {f}"
    free = shutil.disk_usage(path).free
    if free < min_free_bytes:
        return f"disk nearly full under {path}: {free} bytes free < {min_free_bytes}"
    return None


def usable(data_dir: Path) -> Path:
    """``data_dir``, created if need be; a :class:`ConfigError` naming ``MIRAGE_DATA_DIR`` and
    why when it cannot take writes (a file, a read-only or missing parent, a read-only file)."""
    problem = data_dir_problem(data_dir, min_free_bytes=0)
    if problem is not None:
        raise ConfigError(f"MIRAGE_DATA_DIR: {problem}")
    return Path(data_dir)


__all__ = ["data_dir_problem", "usable"]
