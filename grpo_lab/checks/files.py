"""Writing files so that nothing is lost: destinations checked before the work, atomic writes,
a fallback when the disk fills at the end, and JSON without non-finite numbers.

- ``check_destination(path)`` before a long run: the folder can be made and written, the path is
  not a folder, its name fits the file system (the temporary file is made and removed, so a name
  that only just fits is tried for real). A run that would end in ``IsADirectoryError``,
  ``PermissionError`` or ``File name too long`` stops at once.
- ``write_atomically(path, content)`` writes a temporary file in the same folder and renames it
  onto ``path`` (``os.replace`` is atomic on one file system): a crash or ``kill -9`` mid-write
  leaves the old file or the new one, never half of one. The temporaries a killed writer left
  (``.NAME.PID.XXXXXXXX.tmp`` of a process that no longer runs) are removed by the next write of
  ``NAME``. A character device or a FIFO (``/dev/null``, ``/dev/stdout``, a named pipe) is written
  as a stream, never renamed over: as root a rename would replace the device by a regular file.
- ``save_with_fallback(path, save)``: ``save(path)``, and when that fails (the disk filled during
  the run) ``save`` into the temporary folder instead, with a message naming both files: the work
  of a run is never lost at its very end.
- ``finite_json(value)`` replaces NaN and infinities by None (JSON has no NaN; ``json.dumps``
  would write a bare ``NaN`` that no other reader accepts) and says where it did.
- ``read_checksums`` / ``record_checksum`` / ``checksum_problem``: a folder's checksums.json, the
  SHA-256 of each shipped file in it (reference policies, eval sets), checked whenever one is read.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import secrets
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO

from ..errors import ConfigError, shortened

Content = str | bytes | Callable[[BinaryIO], None]
DEFAULT_NAME_MAX = 255  # bytes in one file name on Linux, macOS and Windows file systems
TEMPORARY_TAIL = re.compile(r"\.(\d+)\.[0-9a-f]{8}\.tmp")  # what follows NAME in '.NAME.PID.XXXXXXXX.tmp'


def name_max(directory: Path) -> int:
    """The longest file name (in bytes) the file system of ``directory`` accepts."""
    try:
        return os.pathconf(directory, "PC_NAME_MAX")
    except (OSError, ValueError, AttributeError):  # Windows has no pathconf; a folder not made yet
        return DEFAULT_NAME_MAX


def temporary_stem(path: Path) -> str:
    """The part of ``path``'s temporary names before '.PID.XXXXXXXX.tmp': '.NAME', cut short (by
    whole characters) so that the temporary name fits where NAME itself only just fits."""
    room = name_max(path.parent) - len(f".{2**22}.{'0' * 8}.tmp") - 1  # the longest pid Linux gives, and the dot in front
    stem = path.name
    while len(os.fsencode(stem)) > room:
        stem = stem[:-1]
    return "." + stem


def temporary_path(path: Path) -> Path:
    """A fresh temporary name next to ``path``: '.NAME.PID.XXXXXXXX.tmp'."""
    return path.with_name(f"{temporary_stem(path)}.{os.getpid()}.{secrets.token_hex(4)}.tmp")


def process_is_running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):  # another user's process, or a platform without signal 0
        return True
    return True


def remove_stale_temporaries(path: Path) -> list[Path]:
    """Delete the temporaries of ``path`` left by writers that were killed (their pid no longer
    runs); returns what was deleted. A live writer's temporary is left alone."""
    stem, removed = temporary_stem(path), []
    try:
        entries = list(os.scandir(path.parent))
    except OSError:
        return removed
    for entry in entries:
        tail = TEMPORARY_TAIL.fullmatch(entry.name[len(stem) :]) if entry.name.startswith(stem) else None
        if tail is None or int(tail.group(1)) == os.getpid() or process_is_running(int(tail.group(1))):
            continue
        try:
            if entry.is_file(follow_symlinks=False):
                os.unlink(entry.path)
                removed.append(Path(entry.path))
        except OSError:
            pass  # gone already, or not ours to delete
    return removed


def file_kind(path: Path) -> str | None:
    """'stream' for a character device or FIFO, 'file' for a regular file, None when nothing is
    there, else the kind in words ('block device', 'socket'): the kinds ``write_atomically`` refuses."""
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        return None
    except OSError:
        return None  # e.g. a name too long: check_destination says so
    if stat.S_ISREG(mode):
        return "file"
    if stat.S_ISCHR(mode) or stat.S_ISFIFO(mode):
        return "stream"
    if stat.S_ISDIR(mode):
        return "folder"
    return "block device" if stat.S_ISBLK(mode) else "socket" if stat.S_ISSOCK(mode) else "special file"


def check_destination(path: str | Path, what: str = "path", folder: bool = False) -> Path:
    """Make sure ``path`` can be written before any work is done; raise one ConfigError naming
    ``what`` (a flag or knob name), the path and the reason. ``folder``: ``path`` is a folder that
    files will be written into (made if missing), else a file whose folder is made if missing.
    A character device or FIFO is a valid destination (written as a stream) when it is writable."""
    path = Path(path)
    value_text = shortened(repr(str(path)))

    def refuse(reason: str) -> ConfigError:
        return ConfigError(what, str(path), reason, value_text)

    kind = None if folder else file_kind(path)
    if kind == "folder":
        raise refuse(f"it is a folder; give a file name (e.g. {shortened(repr(str(path / 'run.json')))})")
    if kind not in (None, "file", "stream"):
        raise refuse(f"it is a {kind}: give a regular file, a character device or a FIFO")
    if kind == "stream":
        if not os.access(path, os.W_OK):
            raise refuse("it is a device or pipe that cannot be written")
        return path
    if not folder and path.name in ("", ".", ".."):
        raise refuse("give a file name")
    directory = path if folder else path.parent
    longest = name_max(directory if directory.is_dir() else Path(tempfile.gettempdir()))
    for part in path.parts:
        if len(os.fsencode(part)) > longest:
            raise refuse(f"the name {shortened(repr(part))} is {len(os.fsencode(part))} bytes long; this file system allows at most {longest}")
    if directory.exists() and not directory.is_dir():
        raise refuse(f"{shortened(repr(str(directory)))} is a file, not a folder")
    try:
        directory.mkdir(parents=True, exist_ok=True)
        probe = temporary_path(path if not folder else directory / ".write-check")
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as error:
        raise refuse(f"cannot write in {shortened(repr(str(directory)))} ({error.strerror or error})") from None
    if not folder and path.exists() and not os.access(path, os.W_OK):
        raise refuse("the file exists and is read-only")
    return path


def write_content(file: BinaryIO, content: Content) -> None:
    if isinstance(content, str):
        file.write(content.encode("utf-8"))
    elif isinstance(content, bytes):
        file.write(content)
    else:
        content(file)
    file.flush()


def write_atomically(path: str | Path, content: Content) -> Path:
    """Write ``content`` (text as UTF-8, bytes, or a function that writes into a binary file object,
    such as ``lambda f: torch.save(obj, f)``) to ``path`` all at once: into a temporary file in the
    same folder, flushed to disk, then renamed onto ``path``. The folder is made if missing; the
    temporaries of killed earlier writes of ``path`` are removed. The file gets the usual permissions
    (0o666 less the umask). A character device or FIFO at ``path`` is written directly, as a stream;
    a block device or socket is refused (ValueError). Returns ``path``."""
    path = Path(path)
    kind = file_kind(path)
    if kind == "stream":
        with open(path, "wb") as file:  # a write error (ENOSPC on /dev/full) surfaces here as OSError
            write_content(file, content)
        return path
    if kind not in (None, "file"):
        raise ConfigError("path", str(path), f"it is a {kind}: give a regular file, a character device or a FIFO", shortened(repr(str(path))))
    path.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_temporaries(path)
    temporary = temporary_path(path)
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(descriptor, "wb") as file:
            write_content(file, content)
            os.fsync(file.fileno())
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    return path


class SavedElsewhere(OSError):
    """The destination could not be written after the work was done; the content is in ``saved_to``
    (None when the fallback failed too, the content then is lost). The message names both."""

    def __init__(self, message: str, saved_to: Path | None):
        super().__init__(message)
        self.saved_to = saved_to


def save_with_fallback(path: str | Path, save: Callable[[Path], object], fallback_folder: str | Path | None = None) -> Path:
    """``save(path)`` (a function that writes the finished work to a path, e.g. ``lambda p:
    write_atomically(p, text)`` or a figure's ``save``); if that raises OSError (a disk that filled
    during the run, a folder removed meanwhile), ``save`` again into ``fallback_folder`` (default: the
    temporary folder) as 'grpo-lab-saved-XXXXXXXX/NAME' and raise SavedElsewhere naming both files."""
    path = Path(path)
    try:
        save(path)
        return path
    except OSError as error:
        reason = error.strerror or str(error)
    folder = Path(fallback_folder if fallback_folder is not None else tempfile.gettempdir())
    try:  # a fresh folder, so the file keeps its name (a sweep's NAME.json)
        fallback = Path(tempfile.mkdtemp(prefix="grpo-lab-saved-", dir=folder)) / path.name
    except OSError as error:
        raise SavedElsewhere(
            f"could not write {shortened(str(path))} ({reason}), nor a fallback in {folder} ({error.strerror or error}): it is lost", None
        ) from None
    try:
        save(fallback)
    except OSError as error:
        raise SavedElsewhere(
            f"could not write {shortened(str(path))} ({reason}), nor the fallback {fallback} ({error.strerror or error}): it is lost", None
        ) from None
    raise SavedElsewhere(f"could not write {shortened(str(path))} ({reason}); it was saved to {fallback} instead", fallback)


def read_strict_json(path: str | Path) -> object:
    """The JSON in ``path``, read as standard JSON only: every problem is one ValueError whose text
    says what is wrong (not JSON or not UTF-8, NaN or Infinity, "it is nested too deeply")."""

    def refuse(token: str) -> None:
        raise ValueError(f"it holds {token}, which JSON does not allow")

    try:
        return json.loads(Path(path).read_text(encoding="utf-8"), parse_constant=refuse)
    except RecursionError:
        raise ValueError("it is nested too deeply") from None


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


def sha256_of(path: str | Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def read_checksums(checksums_path: Path, restore: str) -> dict[str, str]:
    """{file name: SHA-256} stored in ``checksums_path`` ({} when there is no such file). A damaged
    one (not JSON, NaN, deeply nested, a value that is not a SHA-256) is one ValueError naming the
    file, what is wrong and ``restore``: how to get it back."""
    if not checksums_path.is_file():
        return {}
    try:
        checksums = read_strict_json(checksums_path)
    except ValueError as error:  # JSONDecodeError, UnicodeDecodeError, NaN and nesting are ValueErrors
        raise ValueError(f"{checksums_path} is not valid JSON ({str(error).splitlines()[0][:80]}): {restore}") from None
    if not isinstance(checksums, dict):
        raise ValueError(f"{checksums_path} is not valid: it holds a JSON {type(checksums).__name__}, not {{file name: SHA-256}}; {restore}")
    for name, value in checksums.items():
        if not (isinstance(value, str) and len(value) == 64 and all(c in "0123456789abcdef" for c in value)):
            raise ValueError(
                f"{checksums_path} is not valid: the checksum of {shortened(repr(name))} is {shortened(repr(value))}, not a SHA-256 (64 hex digits); {restore}"
            )
    return checksums


def record_checksum(checksums_path: Path, path: str | Path, restore: str) -> Path:
    """Store the SHA-256 of the file at ``path`` under its name in ``checksums_path``."""
    checksums = read_checksums(checksums_path, restore)
    checksums[Path(path).name] = sha256_of(path)
    return write_atomically(checksums_path, json.dumps(dict(sorted(checksums.items())), indent=1) + "\n")


def checksum_problem(checksums_path: Path, path: Path, restore: str) -> str | None:
    """Why the file at ``path`` does not have the bytes ``checksums_path`` recorded for it, worded to
    follow the file's name ('has no checksum in ...', 'is damaged or changed: its SHA-256 is ...'), or None."""
    expected = read_checksums(checksums_path, restore).get(path.name)
    if expected is None:
        return f"has no checksum in {checksums_path}"
    actual = sha256_of(path)
    if actual != expected:
        return f"is damaged or changed: its SHA-256 is {actual[:12]}..., {checksums_path.name} says {expected[:12]}..."
    return None
