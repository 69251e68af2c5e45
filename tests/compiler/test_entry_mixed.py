"""Jitted calls of Python numbers, NumPy scalars, pytrees, keywords and static values
take the native entry (directly, or through a front for their structure: dispatch.py)
from their second call on, and give what the general path gives: the same dtypes (weak
Python numbers, NEP 50), the same values; any other call (another dtype, shape, static
value, key set, container type, a non-contiguous array) is noticed and goes to the
general path, which traces it anew where its signature is new."""

import collections
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import rune_jit as rune
from rune_jit._src import backend, config
from rune_jit._src.source_info import ours

from test_entry import HAS_ENTRY

pytestmark = pytest.mark.skipif(not HAS_ENTRY, reason="no native entry on this Python")


def traces() -> int:
    return backend.stats["traced"]


def fast(f) -> str:
    """Which fast path f's calls take now: "entry", "front" (a native dispatcher in
    front of an entry) or "python"."""
    call = type(f).__call__
    if type(call).__name__ != "builtin_function_or_method":
        return "python"
    return "front" if call.__name__ == "rune_jit_front" else "entry"


def same(got, want) -> None:
    assert type(got) is np.ndarray and got.dtype == want.dtype and got.shape == want.shape, (
        got, want)
    np.testing.assert_array_equal(got, want)


def check_calls(f, g, calls, path: str) -> None:
    """Each call of `f` (jitted `g`) made three times gives g's result, and the fast path
    `path` is installed after the first; a call seen before traces nothing."""
    for args, kwargs in calls:
        want = g(*args, **kwargs)
        same(f(*args, **kwargs), want)
        assert fast(f) == path, (args, kwargs)
        before = traces()
        for _ in range(2):
            same(f(*args, **kwargs), want)
        assert traces() == before
    before = traces()
    for args, kwargs in calls:  # every signature again: found, not traced
        same(f(*args, **kwargs), g(*args, **kwargs))
    assert traces() == before


X32, X64, I8 = np.arange(3, dtype=np.float32), np.arange(3.0), np.arange(3, dtype=np.int8)


def test_python_and_numpy_scalars_take_the_entry_with_numpys_dtypes():
    g = lambda x, s: x * s + s  # noqa: E731
    f = rune.jit(g)
    scalars = [2.5, 3, True, np.float64(2.5), np.float32(2.5), np.float16(2.5), np.int64(3),
               np.int32(3), np.int8(3), np.uint8(3), np.bool_(True), np.asarray(2.5),
               np.asarray(2.5, np.float32)]
    check_calls(f, g, [((x, s), {}) for x in (X32, X64, I8) for s in scalars], "entry")


def test_weak_and_strong_scalars_are_told_apart_after_the_entry_is_installed():
    """A Python float is a weak float64, a NumPy float64 and a 0-d array strong ones: the
    entry of one must refuse the others (their program's dtypes differ)."""
    f = rune.jit(lambda x, s: x * s)
    for _ in range(3):
        for s, dtype in [(2.0, np.float32), (np.float64(2.0), np.float64),
                         (np.asarray(2.0), np.float64), (np.float32(2.0), np.float32),
                         (2, np.float32), (True, np.float32), (2.0, np.float32)]:
            assert f(X32, s).dtype == dtype, s
    h = rune.jit(lambda x, s: x + s)
    for _ in range(3):  # bool, int and float Python numbers are three signatures
        for s, want in [(True, I8 + True), (1, I8 + 1), (1.0, I8 + 1.0), (True, I8 + True)]:
            same(h(I8, s), want)


def test_python_ints_are_checked_as_the_general_path_checks_them():
    f = rune.jit(lambda x, n: x * n)
    f(X64, 3), f(X64, 3)
    assert fast(f) == "entry"
    same(f(X64, 2**62), X64 * 2**62)
    with pytest.raises(OverflowError):
        f(X64, 2**63)  # beyond int64: refused by the entry, raised by the general path
    g = rune.jit(lambda x, n: x + n)  # n converted to int8: checked at every call
    g(I8, 3), g(I8, 3)
    with pytest.raises(OverflowError, match="300 out of bounds for int8"):
        g(I8, 300)


def test_pytrees_keywords_and_statics_take_a_front():
    def g(x, s, d, n):
        return x * s + d["a"] - d["b"][0] * n

    d = {"a": X64, "b": (X64 + 1.0,)}
    f = rune.jit(g, static_argnums=3)
    check_calls(f, g, [((X64, 2.0, d, 3), {}), ((X64, 2.0, d), {"n": 4}),
                       ((X64,), {"s": np.float32(2.0), "d": d, "n": 3}),
                       ((X32, 2.0, {"b": [X32], "a": X32}, 2), {})], "front")
    k = rune.jit(lambda xs, scale: [x * scale for x in xs], static_argnames="scale")
    same(k([X64, X64], scale=2.0)[1], X64 * 2.0)  # a list out: the quick path's
    h = rune.jit(lambda t, none, label: t[0] + t[1] * len(label), static_argnums=2)
    check_calls(h, lambda t, none, label: t[0] + t[1] * len(label),
                [(((X64, 2.0), None, "ab"), {}), (((X64, 2.0), None, ("a", 1)), {})],
                "front")


def test_another_structure_or_static_value_is_never_given_the_installed_program():
    f = rune.jit(lambda d, n: sum(d.values()) * n, static_argnums=1)
    a, b = np.ones(2), np.full(2, 2.0)
    f({"a": a, "b": b}, 2), f({"a": a, "b": b}, 2)
    assert fast(f) == "front"
    for d, n, want in [
            ({"a": a, "c": b}, 2, (a + b) * 2),  # other keys, the same number of them
            ({"a": a}, 2, a * 2), ({"a": a, "b": b, "c": a}, 2, (2 * a + b) * 2),
            ({"b": b, "a": a}, 2, (a + b) * 2),  # the same keys, inserted in another order
            ({"a": a, "b": b}, 3, (a + b) * 3), ({"a": a, "b": b}, 2.5, (a + b) * 2.5),
            ({"a": a, "b": b[::-1]}, 2, (a + b[::-1]) * 2),  # a non-contiguous leaf
            ({"a": a, "b": b.astype(np.float32)}, 2, (a + b) * 2),
            ({"a": a, "b": np.ones((1, 2))}, 2, (a + np.ones((1, 2))) * 2),
            ({"a": a, "b": 2.0}, 2, (a + 2.0) * 2), ({"a": a, "b": b}, 2, (a + b) * 2)]:
        same(f(d, n), want)
    # an OrderedDict is a pytree of its own (as in JAX), its leaves in insertion order:
    # another structure, traced anew, never given the dict's program
    g = rune.jit(lambda d: d["a"] - d["b"])
    g({"a": a, "b": b}), g({"a": a, "b": b})
    same(g(collections.OrderedDict(b=b, a=a)), a - b)
    same(g(collections.OrderedDict(b=b, a=a)), a - b)
    t = rune.jit(lambda p: p[0] - p[1])
    t((a, b)), t((a, b))
    for p, want in [((a, b), a - b), ([a, b], a - b), ((b, a), b - a), ((a, b, a), a - b),
                    ((a, None), None), ((a, b), a - b)]:
        if want is None:
            with pytest.raises(TypeError):  # a - None: the general path traces, and says so
                t(p)
        else:
            same(t(p), want)


def test_non_contiguous_and_misaligned_arrays_fall_back():
    f = rune.jit(lambda x, s: x * s)
    x = np.arange(6.0)
    f(x[:3], 2.0), f(x[:3], 2.0)
    for y in (x[::2], x.reshape(3, 2)[:, 0], np.asfortranarray(np.ones((3, 3)))[0]):
        same(f(y, 2.0), y * 2.0)
    raw = np.zeros(3 * 8 + 1, np.uint8)
    misaligned = raw[1:].view(np.float64)
    misaligned[...] = [1.0, 2.0, 3.0]
    same(f(misaligned, 2.0), misaligned * 2.0)


def test_many_python_numbers_take_the_quick_path():
    """The entry knows which of the first 64 leaves are Python numbers; more than that,
    and the call is left to the quick path (still right)."""
    f = rune.jit(lambda *xs: sum(xs))
    xs = tuple(float(i) for i in range(70))
    for _ in range(3):
        assert float(f(*xs)) == sum(xs)
    assert fast(f) == "python"


def test_the_entry_keeps_reference_counts_of_numbers():
    f = rune.jit(lambda x, s, n: x * s + n)
    x, s, n = np.ones(2), 12345.5, 123456789
    f(x, s, n), f(x, s, n)
    before = sys.getrefcount(s), sys.getrefcount(n)
    for _ in range(1000):
        f(x, s, n)
    assert (sys.getrefcount(s), sys.getrefcount(n)) == before


def test_a_backend_chosen_at_run_time_is_followed(monkeypatch):
    """An installed entry (a front's too) leaves the calls to the Python path while
    the backend is not the native one: the interpreter's results, not compiled code's."""
    direct = rune.jit(lambda x, s: rnp_sin(x) * s)
    mixed = rune.jit(lambda x, d, n: rnp_sin(x) * d["s"] * n, static_argnums=2)
    x = np.linspace(0.0, 3.0, 7)
    for _ in range(2):
        direct(x, 2.0), mixed(x, {"s": 2.0}, 1)
    assert (fast(direct), fast(mixed)) == ("entry", "front")
    monkeypatch.setattr(config, "backend", "interpret")
    before = traces()
    for _ in range(2):
        same(direct(x, 2.0), np.sin(x) * 2.0)  # NumPy's sin, bit for bit
        same(mixed(x, {"s": 2.0}, 1), np.sin(x) * 2.0)
    assert traces() == before + 2
    monkeypatch.setattr(config, "backend", "native")
    before = traces()
    direct(x, 2.0), mixed(x, {"s": 2.0}, 1)
    assert traces() == before  # compiled code again


def test_errors_through_a_front_are_the_programs():
    g = rune.jit(lambda a, d: rune.iterate(lambda v: v * 2.0, a, until=lambda v: v > d["top"],
                                           max_steps=3))
    g(1.0, {"top": 2.0}), g(1.0, {"top": 2.0})
    assert fast(g) == "front"
    for _ in range(2):
        with pytest.raises(rune.IterateError, match="max_steps = 3") as err:
            g(1.0, {"top": 100.0})
        assert "compiler/test_entry_mixed.py" in str(err.value.__notes__)  # the user's line
        assert "frames are hidden" in str(err.value.__notes__)
        assert not any(ours(str(entry.path)) for entry in err.traceback)
    assert float(g(1.0, {"top": 2.0})) == 4.0


def rnp_sin(x):
    import rune_jit.numpy as rnp

    return rnp.sin(x)


def test_a_process_that_loads_its_programs_from_disk_loads_their_fronts_too(tmp_path):
    """A front's code is cached on disk as a program's is: a second process runs a call
    of a dict and a static int natively without starting LLVM."""
    code = textwrap.dedent("""
        import numpy as np, rune_jit as rune
        from rune_jit._src.backend.cpu.runtime import llvm
        f = rune.jit(lambda x, d, n: x * d["s"] + n, static_argnums=2)
        x = np.arange(3.0)
        f(x, {"s": 2.0}, 1)
        print(f(x, {"s": 2.0}, 1).tolist(), type(f).__call__.__name__,
              llvm.target_machine.cache_info().currsize)
    """)
    env = dict(os.environ, RUNE_JIT_CACHE_DIR=str(tmp_path))
    runs = [subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                           text=True, check=True).stdout.split() for _ in range(2)]
    assert runs[0][:-1] == runs[1][:-1] == ["[1.0,", "3.0,", "5.0]", "rune_jit_front"]
    assert runs[1][-1] == "0"  # LLVM never started


def test_fronts_of_one_shape_compare_with_their_own_objects():
    """Plans differing only in keys and static values share a front's code: each front
    links it to its own keys, static values and entry."""
    f = rune.jit(lambda d, n: d["a"] * n, static_argnums=1)
    g = rune.jit(lambda d, n: d["b"] * n, static_argnums=1)
    a = np.arange(2.0)
    for _ in range(2):
        f({"a": a}, 2), g({"b": a}, 3)
    assert fast(f) == fast(g) == "front"
    same(f({"a": a}, 2), a * 2)
    same(g({"b": a}, 3), a * 3)
    same(g({"b": a}, 2), a * 2)  # another static value: another program
    with pytest.raises(KeyError):  # another key: f traced again, and its d["a"] fails
        f({"b": a}, 2)
    same(f({"a": a}, 2), a * 2)
