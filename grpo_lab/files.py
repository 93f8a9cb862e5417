"""Writing files so that nothing is lost: destinations checked before the work, atomic writes,
and JSON without non-finite numbers.

- ``check_destination(path)`` before a long run: the folder can be made and written, the path is
  not a folder. A run that would end in ``IsADirectoryError`` or ``PermissionError`` stops at once.
- ``write_atomically(path, content)`` writes a temporary file in the same folder and renames it
  onto ``path`` (``os.replace`` is atomic on one file system): a crash or ``kill -9`` mid-write
  leaves the old file or the new one, never half of one. A leftover ``.NAME.*.tmp`` can be deleted.
- ``finite_json(value)`` replaces NaN and infinities by None (JSON has no NaN; ``json.dumps``
  would write a bare ``NaN`` that no other reader accepts) and says where it did.
"""

from __future__ import annotations

import json
import math
import os
import secrets
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO

from .errors import ConfigError


def check_destination(path: str | Path, what: str = "path", folder: bool = False) -> Path:
    """Make sure ``path`` can be written before any work is done; raise one ConfigError naming
    ``what`` (a flag or knob name), the path and the reason. ``folder``: ``path`` is a folder that
    files will be written into (made if missing), else a file whose folder is made if missing."""
    path = Path(path)
    if folder:
        directory = path
    else:
        if path.is_dir():
            raise ConfigError(what, str(path), f"it is a folder; give a file name (e.g. {str(path / 'run.json')!r})")
        if path.name in ("", ".", ".."):
            raise ConfigError(what, str(path), "give a file name")
        directory = path.parent
    if directory.exists() and not directory.is_dir():
        raise ConfigError(what, str(path), f"{str(directory)!r} is a file, not a folder")
    try:
        directory.mkdir(parents=True, exist_ok=True)
        probe = directory / f".write-check.{os.getpid()}.{secrets.token_hex(4)}.tmp"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as error:
        raise ConfigError(what, str(path), f"cannot write in {str(directory)!r} ({error.strerror or error})") from None
    if not folder and path.exists() and not os.access(path, os.W_OK):
        raise ConfigError(what, str(path), "the file exists and is read-only")
    return path


def write_atomically(path: str | Path, content: str | bytes | Callable[[BinaryIO], None]) -> Path:
    """Write ``content`` (text as UTF-8, bytes, or a function that writes into a binary file object,
    such as ``lambda f: torch.save(obj, f)``) to ``path`` all at once: into a temporary file in the
    same folder, flushed to disk, then renamed onto ``path``. The folder is made if missing.
    The file gets the usual permissions (0o666 less the umask). Returns ``path``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(descriptor, "wb") as file:
            if isinstance(content, str):
                file.write(content.encode("utf-8"))
            elif isinstance(content, bytes):
                file.write(content)
            else:
                content(file)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    return path


def finite_json(value: object, where: str = "") -> tuple[object, list[str]]:
    """(a copy of ``value`` with every non-finite float replaced by None, the places replaced, as
    'history[3].explained_variance'). Dicts, lists and tuples are walked; numpy and torch scalars
    are turned into plain Python numbers first."""
    if hasattr(value, "item") and getattr(value, "ndim", None) == 0:  # numpy / torch scalars
        value = value.item()
    if isinstance(value, float):
        return (value, []) if math.isfinite(value) else (None, [where or "value"])
    if isinstance(value, dict):
        clean, places = {}, []
        for key, item in value.items():
            clean[key], found = finite_json(item, f"{where}.{key}" if where else str(key))
            places += found
        return clean, places
    if isinstance(value, (list, tuple)):
        clean, places = [], []
        for index, item in enumerate(value):
            cleaned, found = finite_json(item, f"{where}[{index}]")
            clean.append(cleaned)
            places += found
        return clean, places
    return value, []


def json_text(value: object, **dumps_options: Any) -> str:
    """``json.dumps`` that refuses NaN and infinities (call ``finite_json`` first to null them)."""
    return json.dumps(value, allow_nan=False, **dumps_options) + "\n"
