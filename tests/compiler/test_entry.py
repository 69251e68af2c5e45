"""The native entry calls only C API functions that the running interpreter exports:
CPython 3.10 has PyObject_Vectorcall and PyObject_CallOneArg in its headers only, so
there jitted calls take the Python path (backend/entry.py). Whether a program has an
entry depends on the Python version, and so does its disk cache key."""

import ctypes
import re
import sys

import numpy as np
import pytest

import rune_jit as rune
from rune_jit._src.backend.cpu.runtime import entry, llvm
from rune_jit._src.errors import IterateError


def declared(llvm_ir: str) -> set[str]:
    return set(re.findall(r'declare [^@]*@"?([\w.]+)"?\(', llvm_ir))


HAS_ENTRY = all(entry.exported(n) for n in entry.C_API)  # False on CPython 3.10


def test_an_entry_calls_only_what_this_python_exports():
    f = rune.jit(lambda x, y: (x * y, x + y))
    lowered = f.lower(np.ones(3), np.ones(3))
    c_api = {n for n in declared(lowered.llvm_ir + lowered.entry_llvm_ir) if n.startswith("Py")}
    # the entry is there where this Python can have one, and absent where it cannot
    assert ({"PyEval_SaveThread", "Py_DecRef"} <= c_api) == HAS_ENTRY
    assert all(hasattr(ctypes.pythonapi, n) for n in c_api), sorted(
        n for n in c_api if not hasattr(ctypes.pythonapi, n))


def test_compiled_code_is_keyed_by_the_python_version():
    assert sys.implementation.cache_tag in llvm.fingerprint()


@pytest.fixture
def as_on_python_310(monkeypatch):
    """Entries compiled from now on are built as on CPython 3.10, whatever runs."""
    hidden = {"PyObject_Vectorcall", "PyObject_CallOneArg"}
    real = entry.exported
    monkeypatch.setattr(entry, "exported", lambda name: name not in hidden and real(name))
    monkeypatch.setenv("RUNE_JIT_CACHE", "0")  # compiled here, not loaded from disk


def test_without_vectorcall_calls_take_the_python_path(as_on_python_310):
    # shapes of its own, so that no program compiled earlier in this process is reused
    f = rune.jit(lambda x, y, z=0.0: x * y + z)
    a, b = np.arange(13.0), np.full(13, 2.0)
    lowered = f.lower(a, b)
    assert lowered.entry_llvm_ir == ""
    names = declared(lowered.llvm_ir)
    assert not names & {"PyObject_Vectorcall", "PyObject_CallOneArg", "PyEval_SaveThread"}
    for _ in range(3):
        np.testing.assert_array_equal(f(a, b), a * 2)
        np.testing.assert_array_equal(f(a, y=b), a * 2)
        np.testing.assert_array_equal(f(y=b, x=a, z=1.0), a * 2 + 1)
    assert type(type(f).__call__).__name__ == "function"  # no entry installed
    with pytest.raises(TypeError, match="unexpected keyword argument 'q'"):
        f(a, b, q=1.0)


def test_without_call_one_arg_failures_still_raise(as_on_python_310):
    g = rune.jit(lambda x: rune.iterate(lambda c: c + 1.0, x, until=lambda c: c[3] > 100,
                                        max_steps=3))
    x = np.zeros((17,))
    for _ in range(3):
        with pytest.raises(IterateError, match="max_steps = 3"):
            g(x)
