"""Load LLVM's object code for x86-64 Linux into this process without a JIT linker.

Programs are compiled for the large code model: their object files hold code and
constants and refer to anything else (other sections, libm, Python's C API) through
absolute 64-bit relocations. Loading one is then: lay its sections out in fresh pages,
resolve its symbols, patch the relocations, and make the code executable. That costs
tens of microseconds where an ORC LLJIT link costs 0.2-0.5 ms (0.5 when the CPU's caches
are cold, as on a program's first call; a new LLJIT costs 1.7 ms more), which is most of
loading a program from the disk cache.

Anything else (another format, machine or relocation kind, weak or common symbols,
thread-local data, constructors, a malformed object) raises `Unsupported`, and
`llvm.link` hands the object to LLJIT instead. As with LLJIT, a symbol nobody defines
raises at load time, never at call time. `.eh_frame` is not loaded: nothing unwinds
through compiled programs.
"""

from __future__ import annotations

import ctypes
import struct
import sys
import weakref
from typing import Callable

EHDR = struct.Struct("<16sHHIQQQIHHHHHH")
SHDR = struct.Struct("<IIQQQQIIQQ")
SYM = struct.Struct("<IBBHQQ")
RELA = struct.Struct("<QQq")
ET_REL, EM_X86_64 = 1, 62
SHT_SYMTAB, SHT_RELA, SHT_NOBITS = 2, 4, 8
INIT_ARRAYS = (14, 15, 16)  # SHT_INIT_ARRAY, SHT_FINI_ARRAY, SHT_PREINIT_ARRAY
CONSTRUCTORS = (".ctors", ".dtors", ".init_array", ".fini_array", ".preinit_array")
SHF_WRITE, SHF_ALLOC, SHF_EXECINSTR, SHF_TLS = 0x1, 0x2, 0x4, 0x400
SHN_UNDEF, SHN_ABS = 0, 0xFFF1
STB_GLOBAL = 1
PAGE = 4096
PROT_READ, PROT_WRITE, PROT_EXEC = 1, 2, 4
MAP_PRIVATE, MAP_ANONYMOUS = 0x02, 0x20
# relocation kind -> (width in bytes, signed, PC-relative)
RELOCATIONS = {1: (8, False, False),   # R_X86_64_64: S + A
               24: (8, True, True),    # R_X86_64_PC64: S + A - P
               2: (4, True, True),     # R_X86_64_PC32
               4: (4, True, True),     # R_X86_64_PLT32 (no stub: the target must be near)
               10: (4, False, False),  # R_X86_64_32
               11: (4, True, False)}   # R_X86_64_32S


class Unsupported(Exception):
    """An object this loader does not handle (LLJIT will)."""


class Image:
    """Pages holding one loaded object; unmapped when this goes, but not as the
    interpreter exits (code may run until the end, and the process's end frees it)."""

    def __init__(self, size: int):
        base = _libc.mmap(None, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                          -1, 0)
        if base in (None, ctypes.c_void_p(-1).value):
            raise MemoryError("rune_jit: cannot map memory for compiled code")
        self.base, self.size = base, size
        weakref.finalize(self, _libc.munmap, base, size).atexit = False


def load(obj: bytes, symbols: list[str], resolve: Callable[[str], int | None]
         ) -> tuple[Image, list[int]]:
    """Load `obj`; -> (its image, the address of each of `symbols`). `resolve` gives the
    address of a name the object uses and does not define (None: nobody defines it)."""
    if _libc is None:
        raise Unsupported("not Linux")
    try:
        sections = _sections(obj)
        groups = _groups(sections)
        layout, size = _layout(sections, groups)
        image = Image(size)
        names, addresses = _symbols(obj, sections, layout, image.base, resolve)
    except (struct.error, IndexError, ValueError) as err:  # not a well-formed object
        raise Unsupported(err) from None
    data = bytearray(size)
    for i, offset in layout.items():
        name, kind, _, _, start, length, *_ = sections[i]
        if kind != SHT_NOBITS:
            data[offset:offset + length] = obj[start:start + length]
    for target, rela in _relocation_tables(sections, layout):
        _relocate(data, obj, rela, layout[target], image.base, addresses)
    ctypes.memmove(image.base, bytes(data), size)
    _protect(groups, layout, image.base, size)
    try:
        return image, [names[s] for s in symbols]
    except KeyError as err:
        raise RuntimeError(f"rune_jit: compiled code defines no symbol {err}") from None


def process_symbol(name: str) -> int | None:
    """The address of `name` in the process's global scope (the executable, libpython,
    libraries loaded as global), or None."""
    return _libc.dlsym(None, name.encode()) if _libc is not None else None


def _sections(obj: bytes) -> list[tuple]:
    """(name, type, flags, addralign, offset, size, link, info) of each section."""
    if len(obj) < EHDR.size:
        raise Unsupported("too short")
    ident, kind, machine, _, _, _, shoff, _, _, _, _, shentsize, shnum, shstrndx = (
        EHDR.unpack_from(obj))
    if ident[:6] != b"\x7fELF\x02\x01" or kind != ET_REL or machine != EM_X86_64:
        raise Unsupported("not an x86-64 ELF relocatable object")
    headers = [SHDR.unpack_from(obj, shoff + i * shentsize) for i in range(shnum)]
    strtab = headers[shstrndx]
    out = []
    for name, kind, flags, _, offset, size, link, info, align, _ in headers:
        if kind != SHT_NOBITS and offset + size > len(obj):
            raise Unsupported("cut short")
        at = strtab[4] + name
        out.append((obj[at:obj.index(b"\0", at)].decode(), kind, flags, max(align, 1),
                    offset, size, link, info))
    return out


def _groups(sections: list[tuple]) -> list[list[int]]:
    """The sections to load: code, constants, data."""
    groups: list[list[int]] = [[], [], []]
    for i, (name, kind, flags, align, *_) in enumerate(sections):
        if kind in INIT_ARRAYS or name.startswith(CONSTRUCTORS) or flags & SHF_TLS:
            raise Unsupported(f"section {name}")  # constructors, thread-local data
        if flags & SHF_ALLOC and name != ".eh_frame":
            if align > PAGE:
                raise Unsupported(f"section {name} aligned to {align}")
            groups[0 if flags & SHF_EXECINSTR else 2 if flags & SHF_WRITE else 1].append(i)
    return groups


def _layout(sections: list[tuple], groups: list[list[int]]) -> tuple[dict[int, int], int]:
    """{section index: offset in the image}, and the image's size: code, constants and
    data each start on a page of their own, so that each gets its own protection."""
    layout, at = {}, 0
    for group in groups:
        at = -(-at // PAGE) * PAGE
        for i in group:
            align, size = sections[i][3], sections[i][5]
            at = -(-at // align) * align
            layout[i] = at
            at += size
    return layout, max(-(-at // PAGE) * PAGE, PAGE)


def _symbols(obj, sections, layout, base, resolve) -> tuple[dict[str, int], list[int]]:
    """({global name: address}, the address of every symbol table entry, 0 for those
    no loaded section can refer to)."""
    tables = [s for s in sections if s[1] == SHT_SYMTAB]
    if len(tables) != 1:
        raise Unsupported("no single symbol table")
    _, _, _, _, offset, size, link, _ = tables[0]
    names_at = sections[link][4]
    names, addresses = {}, []
    for name_at, info, _, shndx, value, _ in SYM.iter_unpack(obj[offset:offset + size]):
        at = names_at + name_at
        name = obj[at:obj.index(b"\0", at)].decode()
        if shndx == SHN_UNDEF and name:
            if info >> 4 != STB_GLOBAL:
                raise Unsupported(f"weak reference to {name}")
            address = resolve(name)
            if address is None:
                raise RuntimeError(f"rune_jit: compiled code refers to {name!r}, which "
                                   "nothing in this process defines")
        elif shndx == SHN_ABS:
            address = value
        elif shndx in layout:
            address = base + layout[shndx] + value
        else:
            address = 0  # the null symbol, or one in a section not loaded
        if info >> 4 == STB_GLOBAL and shndx != SHN_UNDEF:
            names[name] = address
        addresses.append(address)
    return names, addresses


def _relocation_tables(sections, layout) -> list[tuple[int, tuple]]:
    """(target section, relocation table) for each loaded target."""
    return [(s[7], s) for s in sections if s[1] == SHT_RELA and s[7] in layout]


def _relocate(data: bytearray, obj: bytes, rela: tuple, at: int, base: int,
              addresses: list[int]) -> None:
    offset, size = rela[4], rela[5]
    for where, info, addend in RELA.iter_unpack(obj[offset:offset + size]):
        kind, symbol = info & 0xFFFFFFFF, info >> 32
        if kind not in RELOCATIONS:
            raise Unsupported(f"relocation kind {kind}")
        width, signed, relative = RELOCATIONS[kind]
        target = addresses[symbol]
        if not target:
            raise Unsupported("relocation against a section not loaded")
        value = target + addend - (base + at + where if relative else 0)
        try:
            data[at + where:at + where + width] = value.to_bytes(width, "little",
                                                                 signed=signed)
        except OverflowError:
            raise Unsupported(f"relocation kind {kind} out of range") from None


def _protect(groups, layout, base: int, size: int) -> None:
    """Code read and execute, constants read only, data read and write."""
    starts = [layout[g[0]] // PAGE * PAGE for g in groups if g] + [size]
    modes = [m for g, m in zip(groups, (PROT_READ | PROT_EXEC, PROT_READ,
                                        PROT_READ | PROT_WRITE)) if g]
    for start, end, mode in zip(starts, starts[1:], modes):
        if end > start and _libc.mprotect(base + start, end - start, mode) != 0:
            raise OSError(ctypes.get_errno(), "rune_jit: cannot protect compiled code")


def _load_libc():
    if not sys.platform.startswith("linux"):
        return None
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                          ctypes.c_int, ctypes.c_long]
    libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    libc.dlsym.restype = ctypes.c_void_p
    libc.dlsym.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
    return libc


_libc = _load_libc()
