"""Entries on disk that a new process may load: compiled object code and saved programs.

An entry is a file named by its key (a hash of the program, the CPU, the versions and
the user), written to a temporary file and renamed into place. It describes itself:
it holds its key and a checksum over key and contents, so a file that is cut short,
corrupt, renamed or swapped with another entry is recompiled, never trusted.

rune_jit runs the machine code it finds here, so it trusts only what this user alone
could have written: the cache root and the directories under it must be directories
(not symlinks) owned by this user and writable by nobody else, and so must every entry
(opened without following symlinks). A root that fails that check is not used: this
process caches in a private directory of its own instead, with a warning naming the
path and the reason. The root is created with mode 0700.

The cache is bounded: when it holds more than RUNE_JIT_CACHE_MAX_BYTES (default 1 GiB),
the entries used least recently are deleted (a load marks an entry used). The check
runs at this process's first write and then every 256 writes.

Settings: RUNE_JIT_CACHE=0 disables the cache; RUNE_JIT_CACHE_DIR moves it from
$XDG_CACHE_HOME/rune_jit (else ~/.cache/rune_jit). `python -m rune_jit cache info`
and `python -m rune_jit cache clear` show and empty it.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import struct
import sys
import tempfile
import warnings
from functools import lru_cache
from pathlib import Path
from typing import NamedTuple

from ..version import __version__
from .forks import renew_in_child

MAGIC = b"RUNEJIT2"
HEADER = struct.Struct("<8s32sQ")  # magic, sha256 of key and payload, payload length
DEFAULT_MAX_BYTES = 1 << 30
EVICT_EVERY = 256  # writes between two checks of the size
EVICTED_TO = 0.8  # of the cap, so that the next writes do not evict again at once
SUFFIXES = (".bin", ".prog", ".entry", ".front", ".vmfb")  # programs, saved ones, entries,
# fronts, IREE's modules (backend/iree.py)

_lock = renew_in_child(sys.modules[__name__], "_lock")
_state = {"writes": 0}


def enabled() -> bool:
    return os.environ.get("RUNE_JIT_CACHE", "1") not in ("0", "false", "no", "off")


def configured_directory() -> Path:
    """The cache root the settings name (which `directory` may refuse)."""
    explicit = os.environ.get("RUNE_JIT_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "rune_jit"


def directory() -> Path:
    """The root entries go to: the configured one if it is safe, else a private one."""
    return _checked_root(str(configured_directory()))


def max_bytes() -> int:
    value = os.environ.get("RUNE_JIT_CACHE_MAX_BYTES", "")
    try:
        n = int(value) if value else DEFAULT_MAX_BYTES
    except ValueError:
        n = -1
    if n < 0:
        raise ValueError(f"RUNE_JIT_CACHE_MAX_BYTES must be a non-negative number of bytes, "
                         f"got {value!r}")
    return n


def key(program: str, machine: str) -> str:
    """An entry's key. The user is part of it: nobody else's entries are ours anyway."""
    parts = [program, machine, compiler_version(), str(os.getuid())]
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()


@lru_cache(maxsize=None)
def compiler_version() -> str:
    """rune_jit's version and a hash of its source: code from an older compiler (or a
    changed checkout) is never loaded."""
    h = hashlib.sha256(__version__.encode())
    root = Path(__file__).resolve().parents[1]  # the whole package
    for path in sorted(root.rglob("*.py")):
        h.update(path.read_bytes())
    return h.hexdigest()


# ------------------------------------------------------------- trust


def unsafe(st: os.stat_result, want_dir: bool) -> str | None:
    """Why a file or directory with this (lstat) status must not be trusted, or None."""
    kind = stat.S_ISDIR(st.st_mode) if want_dir else stat.S_ISREG(st.st_mode)
    if stat.S_ISLNK(st.st_mode):
        return "it is a symbolic link"
    if not kind:
        return "it is not a directory" if want_dir else "it is not a regular file"
    if st.st_uid != os.getuid():
        return f"it is owned by uid {st.st_uid}, not by this user (uid {os.getuid()})"
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return f"it is writable by others (mode {stat.S_IMODE(st.st_mode):o})"
    return None


_warned: set[tuple[str, str]] = set()


def _warn(path: Path | str, reason: str, consequence: str) -> None:
    if (str(path), reason) not in _warned:
        _warned.add((str(path), reason))
        warnings.warn(f"rune_jit: not using {path} for cached code: {reason}; {consequence}",
                      RuntimeWarning, stacklevel=3)


@lru_cache(maxsize=None)
def _checked_root(path: str) -> Path:
    root = Path(path)
    try:
        root.mkdir(mode=0o700, parents=True, exist_ok=True)
        reason = unsafe(os.lstat(root), want_dir=True)
    except OSError as err:
        reason = f"it cannot be created ({err.strerror})"
    if reason is None:
        return root
    private = Path(tempfile.mkdtemp(prefix="rune_jit-"))
    _warn(root, reason, f"this process caches in {private} instead")
    return private


def _subdir(k: str, create: bool) -> Path | None:
    """The directory of entry `k`, if it can be trusted (created if asked)."""
    sub = directory() / k[:2]
    try:
        if create:
            sub.mkdir(mode=0o700, exist_ok=True)
        reason = unsafe(os.lstat(sub), want_dir=True)
    except OSError:
        return None
    if reason is not None:
        _warn(sub, reason, "its entries are not loaded")
        return None
    return sub


# ------------------------------------------------------------- entries


class Entry(NamedTuple):
    meta: dict
    payload: bytes


def _read(path: Path) -> bytes | None:
    """The bytes of an entry we may trust, and mark it used; None otherwise."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return None
    try:
        reason = unsafe(os.fstat(fd), want_dir=False)
        if reason is not None:
            _warn(path, reason, "it is not loaded")
            return None
        with os.fdopen(fd, "rb", closefd=False) as f:
            data = f.read()
        os.utime(fd)  # used now: eviction keeps it longer
        return data
    except OSError:
        return None
    finally:
        os.close(fd)


def load(k: str, suffix: str = ".bin") -> Entry | None:
    """(metadata, payload) of entry `k`, or None if absent, untrusted, corrupt, not
    entry `k` or disabled. `suffix` tells kinds of entries apart (`.prog`: jit's saved
    programs)."""
    if not enabled():
        return None
    sub = _subdir(k, create=False)
    data = _read(sub / f"{k}{suffix}") if sub is not None else None
    if data is None or len(data) < HEADER.size:
        return None
    magic, digest, length = HEADER.unpack_from(data)
    payload = data[HEADER.size:]
    if magic != MAGIC or len(payload) != length or _checksum(k, payload) != digest:
        return None
    try:
        (meta_len,) = struct.unpack_from("<Q", payload)
        meta = json.loads(payload[8:8 + meta_len])
    except (struct.error, ValueError):
        return None
    if not isinstance(meta, dict) or meta.get("entry_key") != k:
        return None
    return Entry(meta, payload[8 + meta_len:])


def _checksum(k: str, payload: bytes) -> bytes:
    return hashlib.sha256(k.encode() + b"\0" + payload).digest()


def store(k: str, meta: dict, data: bytes, suffix: str = ".bin") -> None:
    """Write entry `k` atomically; a cache that cannot be written is skipped."""
    if not enabled():
        return
    meta_bytes = json.dumps({**meta, "entry_key": k}).encode()
    payload = struct.pack("<Q", len(meta_bytes)) + meta_bytes + data
    blob = HEADER.pack(MAGIC, _checksum(k, payload), len(payload)) + payload
    sub = _subdir(k, create=True)
    if sub is None:
        return
    try:
        fd, tmp = tempfile.mkstemp(dir=sub, prefix=".tmp-")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(blob)
            os.replace(tmp, sub / f"{k}{suffix}")
        except BaseException:
            os.unlink(tmp)
            raise
    except OSError:
        return
    with _lock:
        due = _state["writes"] % EVICT_EVERY == 0
        _state["writes"] += 1
    if due:
        evict(max_bytes())


# ------------------------------------------------------------- size


class Usage(NamedTuple):
    root: Path
    entries: int
    bytes: int


def _entries() -> list[tuple[float, int, Path]]:
    """(last use, size, path) of every entry file of ours under the root."""
    found = []
    root = directory()
    try:
        subs = [d for d in os.scandir(root) if d.is_dir(follow_symlinks=False)]
    except OSError:
        return []
    for sub in subs:
        try:
            files = list(os.scandir(sub.path))
        except OSError:
            continue
        for f in files:
            if f.name.endswith(SUFFIXES) or f.name.startswith(".tmp-"):
                try:
                    st = f.stat(follow_symlinks=False)
                except OSError:
                    continue
                if stat.S_ISREG(st.st_mode) and st.st_uid == os.getuid():
                    found.append((st.st_mtime, st.st_size, Path(f.path)))
    return found


def usage() -> Usage:
    entries = _entries()
    return Usage(directory(), len(entries), sum(size for _, size, _ in entries))


def evict(limit: int) -> int:
    """Delete the entries used least recently until at most `limit` bytes (less a
    margin) remain, if more are held; -> the bytes deleted."""
    entries = _entries()
    total = sum(size for _, size, _ in entries)
    if total <= limit:
        return 0
    freed = 0
    for _, size, path in sorted(entries):
        if total - freed <= limit * EVICTED_TO:
            break
        try:
            path.unlink()
            freed += size
        except OSError:
            pass
    return freed


def clear() -> int:
    """Delete every entry; -> the bytes deleted."""
    return evict(-1)
