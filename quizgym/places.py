"""What a command keeps between runs in; the folder it is kept in, the stamp of the code that made
it, and the file written whole out."""

from __future__ import annotations

import functools
import importlib.util
import os
import sys
from pathlib import Path

__all__ = ["CACHE_ENV", "OFF_ENV", "cache_dir", "library_stamp", "trusted", "write_whole"]

CACHE_ENV = "QUIZGYM_CACHE_DIR"
OFF_ENV = "QUIZGYM_CACHE"


def cache_dir() -> Path | None:
    """The folder cache files go in, or None when the cache is switched off or the folder is
    not the user's alone (:func:`trusted`).

    The folder is ``$QUIZGYM_CACHE_DIR`` when set, else the user cache folder (platformdirs);
    ``QUIZGYM_CACHE=off`` switches every cache off, and a folder others can write to is not used
    (:func:`trusted`). A kept file names the code that made it by :func:`library_stamp`: where a
    library is and when its ``__init__`` changed, found without importing it.
    """
    if os.environ.get(OFF_ENV, "").strip().lower() in {"off", "0", "no", "false"}:
        return None
    chosen = os.environ.get(CACHE_ENV)
    if chosen:
        folder = Path(chosen)
    else:
        import platformdirs

        folder = Path(platformdirs.user_cache_dir("quizgym", appauthor=False)) / "compiled"
    return folder if trusted(folder) else None


_REFUSED: set[str] = set()


def trusted(folder: Path) -> bool:
    """Whether a cache folder is the user's alone: one that does not exist yet (quizgym makes
    it, readable by the user only), or one the user owns that nobody else can write to.

    A file in a folder others can write (or that another user owns) could be anyone's: it is
    neither read nor written, and the user is told so once per folder (on standard error)."""
    if os.name != "posix":
        return True  # Windows keeps the user's cache folder in the profile, under its ACLs
    try:
        info = os.stat(folder)
    except FileNotFoundError:
        return True
    except OSError:
        return True  # not a folder that can be read: every read of it fails, and says nothing
    if info.st_uid != os.getuid():
        problem = "it belongs to another user"
    elif info.st_mode & 0o022:
        problem = "other users can write to it"
    else:
        return True
    if str(folder) not in _REFUSED:
        _REFUSED.add(str(folder))
        sys.stderr.write(
            f"quizgym: the cache folder {folder} is not used: {problem}, so what it holds may "
            f"not be quizgym's (chmod go-w it, or set {CACHE_ENV} to a folder of your own)\n"
        )
    return False


def library_stamp(name: str) -> str:
    """Where a library (or module) is and when its file changed, found without importing it."""
    spec = importlib.util.find_spec(name)
    origin = spec.origin if spec is not None else None
    if origin is None:
        return f"{name}:absent"
    info = os.stat(origin)
    return f"{name}:{origin}:{info.st_size}:{info.st_mtime_ns}"


def write_whole(path: Path, data: bytes) -> Path:
    """Write a file whole or not at all: into a temporary name beside it, then renamed over it.

    A writer that fails half-way (a full disk, an error found while writing) leaves the earlier
    file, or none, never a truncated or broken one.

    Raises:
        OSError: the folder cannot be written.
    """
    import tempfile

    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
        os.chmod(temporary, 0o644 & ~_umask())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return path


@functools.cache
def _umask() -> int:
    """The process's umask (read once: setting it to read it is not safe among threads)."""
    mask = os.umask(0)
    os.umask(mask)
    return mask
