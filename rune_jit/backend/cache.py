"""Object code on disk, so a new process skips LLVM for programs it has compiled before.

An entry is keyed by a hash of the program (its IR), the CPU name and features,
the llvmlite and LLVM versions, and rune_jit's version and source. It is written to a temporary file
and renamed into place (atomic), and it carries a checksum: an entry that is
corrupt or cut short is detected, ignored and written again, never trusted.

Settings: RUNE_JIT_CACHE=0 disables the cache; RUNE_JIT_CACHE_DIR moves it from
$XDG_CACHE_HOME/rune_jit (else ~/.cache/rune_jit).
"""

from __future__ import annotations

import hashlib
import json
import os
import struct
import tempfile
from functools import lru_cache
from pathlib import Path

MAGIC = b"RUNEJIT1"
HEADER = struct.Struct("<8s32sQ")  # magic, sha256 of the payload, payload length


def enabled() -> bool:
    return os.environ.get("RUNE_JIT_CACHE", "1") not in ("0", "false", "no", "off")


def directory() -> Path:
    explicit = os.environ.get("RUNE_JIT_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "rune_jit"


def key(program: str, machine: str) -> str:
    return hashlib.sha256("\0".join([program, machine, compiler_version()]).encode()).hexdigest()


@lru_cache(maxsize=None)
def compiler_version() -> str:
    """rune_jit's version and a hash of its source: code from an older compiler (or a
    changed checkout) is never loaded."""
    from .. import __version__

    h = hashlib.sha256(__version__.encode())
    root = Path(__file__).resolve().parent.parent
    for path in sorted(root.rglob("*.py")):
        h.update(path.read_bytes())
    return h.hexdigest()


def _path(k: str, suffix: str) -> Path:
    return directory() / k[:2] / f"{k}{suffix}"


def load(k: str, suffix: str = ".bin") -> tuple[dict, bytes] | None:
    """(metadata, payload: object code) of entry `k`, or None if absent, corrupt or
    disabled. `suffix` tells kinds of entries apart (`.prog`: jit's saved programs)."""
    if not enabled():
        return None
    try:
        data = _path(k, suffix).read_bytes()
    except OSError:
        return None
    if len(data) < HEADER.size:
        return None
    magic, digest, length = HEADER.unpack_from(data)
    payload = data[HEADER.size:]
    if magic != MAGIC or len(payload) != length or hashlib.sha256(payload).digest() != digest:
        return None
    (meta_len,) = struct.unpack_from("<Q", payload)
    try:
        meta = json.loads(payload[8:8 + meta_len])
    except ValueError:
        return None
    return meta, payload[8 + meta_len:]


def store(k: str, meta: dict, obj: bytes, suffix: str = ".bin") -> None:
    """Write entry `k` atomically; a cache that cannot be written is skipped."""
    if not enabled():
        return
    meta_bytes = json.dumps(meta).encode()
    payload = struct.pack("<Q", len(meta_bytes)) + meta_bytes + obj
    blob = HEADER.pack(MAGIC, hashlib.sha256(payload).digest(), len(payload)) + payload
    path = _path(k, suffix)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(blob)
            os.replace(tmp, path)
        except BaseException:
            os.unlink(tmp)
            raise
    except OSError:
        pass
