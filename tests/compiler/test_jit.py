"""jit: the API, the code it makes, its errors, the caches and threads."""

import functools
import gc
import math
import os
import platform
import re
import subprocess
import sys
import textwrap
import threading
import types

import numpy as np
import pytest

import rune_jit as rune
import rune_jit.numpy as rnp
from rune_jit._src import config
from rune_jit import tree
from rune_jit._src.backend.cpu import runtime


def newton(a, max_steps=50):
    return rune.iterate(lambda x: (x + a / x) / 2, a,
                        until=lambda x: rnp.abs(x * x - a) <= 1e-12 * a, max_steps=max_steps)


# ------------------------------------------------------------- API


def test_one_program_per_signature():
    calls = []

    def f(x):
        calls.append(1)
        return x * 2

    g = rune.jit(f)
    g(np.ones(3)), g(np.zeros(3)), g(np.ones(4)), g(np.ones(3, np.float32))
    assert len(calls) == 3  # (3,) f64 twice, then (4,) f64 and (3,) f32


def test_static_argnums_are_part_of_the_signature():
    g = rune.jit(lambda n, x: x ** n, static_argnums=0)
    np.testing.assert_allclose(g(2, np.arange(3.0)), [0.0, 1.0, 4.0])
    np.testing.assert_allclose(g(3, np.arange(3.0)), [0.0, 1.0, 8.0])


def test_usable_as_a_decorator_with_and_without_options():
    @rune.jit
    def a(x):
        return x + 1

    @rune.jit(static_argnums=(1,))
    def b(x, k):
        return x + k

    assert a(np.float64(1.0)) == 2.0 and b(np.float64(1.0), 5) == 6.0


def test_grad_of_jit_sees_the_operations():
    f = rune.jit(lambda x: rnp.sin(x) * x)
    ir = str(rune.make_ir(rune.grad(f))(1.0))
    assert "sin" in ir and "cos" in ir
    np.testing.assert_allclose(rune.grad(f)(1.0), np.cos(1.0) + np.sin(1.0), rtol=1e-14)


def test_jit_of_transformations():
    x = np.linspace(0.1, 1.0, 5)
    np.testing.assert_allclose(rune.jit(rune.vmap(rune.grad(lambda v: rnp.sin(v) ** 2)))(x),
                               2 * np.sin(x) * np.cos(x), rtol=1e-13)
    np.testing.assert_allclose(rune.jit(rune.hessian(lambda v: rnp.sum(v ** 3)))(x),
                               np.diag(6 * x), rtol=1e-13)


def test_lowered_stages_are_text():
    low = rune.jit(lambda x, y: rnp.tanh(rnp.sin(x) * 2 + y)).lower(np.ones(8), np.ones(8))
    assert "tanh" in low.ir and "define" in low.llvm_ir and "ret" in low.asm


def test_elementwise_chain_is_one_loop():
    """tanh(sin(x) * 2 + y) fuses into a single loop: no temporary arrays."""
    llvm_ir = rune.jit(lambda x, y: rnp.tanh(rnp.sin(x) * 2 + y)).lower(
        np.ones(1000), np.ones(1000)).llvm_ir
    program = re.split(r'define i64 @"rune_program_\d+"', llvm_ir)[1].split("\ndefine ")[0]
    assert program.count("phi") == 1  # one induction variable (the math kernels have theirs)
    assert "malloc" not in llvm_ir and "arena" not in llvm_ir


def test_scan_reads_rows_in_place_and_keeps_scalars_in_registers():
    f = lambda xs: rune.scan(lambda c, x: (c * 0.5 + x * 2.0,) * 2, 0.0, xs)  # noqa: E731
    llvm_ir = rune.jit(f).lower(np.ones(100)).llvm_ir
    assert "arena" not in llvm_ir  # the carry is a register, rows are read where they are
    np.testing.assert_allclose(rune.jit(f)(np.ones(100))[1], f(np.ones(100))[1], rtol=1e-13)


def test_scan_fission_maps_what_does_not_read_the_carry(monkeypatch):
    f = lambda xs: rune.scan(lambda c, x: (c * 0.5 + rnp.sin(x),) * 2, 0.0, xs)  # noqa: E731
    xs = np.linspace(-3, 3, 100)
    compiled = rune.jit(f).lower(xs).ir
    top, loop = compiled.split("scan", 1)
    assert "sin" in top and "sin" not in loop  # sin(x) for all rows, before the loop
    got = rune.jit(f)(xs)[1]
    monkeypatch.setattr(config, "backend", "interpret")
    np.testing.assert_allclose(got, f(xs)[1], rtol=1e-13)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("a_shape,b_shape,transpose", [
    ((16, 69), (69, 24), False), ((3, 16, 40), (3, 40, 9), False), ((24, 37), (37,), False),
    ((40,), (40, 17), False), ((18, 40), (40, 70), False), ((3, 18, 40), (3, 40, 70), False),
    ((130, 18), (130, 70), True)],
    ids=["matrix", "batched", "matrix-vector", "vector-matrix", "wide, ragged tiles",
         "wide, batched", "transposed, k leading"])
def test_products_big_enough_for_register_tiles_match_numpy(dtype, a_shape, b_shape,
                                                            transpose):
    """Big enough products take register tiles: whole vectors along k (then the rest of
    k), or TILE rows by whole vectors of columns (then the rows and columns left)."""
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=a_shape).astype(dtype), rng.normal(size=b_shape).astype(dtype)
    f = (lambda a, b: a.T @ b) if transpose else (lambda a, b: a @ b)
    got = rune.jit(f)(a, b)
    assert got.dtype == dtype
    np.testing.assert_allclose(got, f(a, b), rtol=1e-5 if dtype == np.float32 else 1e-12,
                               atol=1e-5 if dtype == np.float32 else 1e-12)


def test_float32_sum_is_accurate():
    x = np.full(1_000_000, 0.1, np.float32)
    got = rune.jit(rnp.sum)(x)
    assert got.dtype == np.float32
    assert abs(float(got) - 100000.0) / 100000.0 < 1e-6  # a naive float32 sum is off by 1e-2


# ------------------------------------------------------------- errors


def test_iterate_error_from_compiled_code_has_the_same_text():
    lanes = np.array([1.0, 16.0, 1e6] * 20)  # enough lanes for vector blocks
    f = rune.jit(rune.vmap(lambda a: newton(a, 3)))
    with pytest.raises(rune.IterateError) as err:
        f(lanes)
    assert str(err.value) == ("rune_jit.iterate: until is still false after max_steps = 3 "
                              "steps, in lane 1")
    with pytest.raises(rune.IterateError) as err:
        rune.jit(lambda a: newton(a, 2))(16.0)
    assert str(err.value).endswith("max_steps = 2 steps")
    assert any("compiler/test_jit.py" in note for note in err.value.__notes__)  # the user's line


def test_nan_lane_runs_to_max_steps_and_raises():
    a = np.ones(40)
    a[35] = np.nan
    with pytest.raises(rune.IterateError, match="in lane 35"):
        rune.jit(rune.vmap(newton))(a)


def test_nested_lanes_name_a_tuple():
    a = np.ones((3, 40))
    a[2, 7] = 1e300
    with pytest.raises(rune.IterateError, match=r"in lane \(2, 7\)"):
        rune.jit(rune.vmap(rune.vmap(lambda v: newton(v, 5))))(a)


def test_integer_division_by_zero_is_numpys():
    a = np.array([7, -7, 0, 5], np.int64)
    b = np.array([0, 2, 0, -1], np.int64)
    with np.errstate(all="ignore"):
        want = (a // b, a % b)
    got = rune.jit(lambda a, b: (a // b, a % b))(a, b)
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[1], want[1])


def test_traced_index_is_clamped():
    f = rune.jit(lambda x, i: x[i])
    x = np.arange(5.0)
    assert [float(f(x, np.int64(i))) for i in (-1, 2, 9, -9)] == [4.0, 2.0, 4.0, 0.0]


def test_singular_solve_raises():
    with pytest.raises(np.linalg.LinAlgError, match="singular"):
        rune.jit(rnp.linalg.solve)(np.zeros((2, 2)), np.ones(2))


def test_allocation_failure_raises_memory_error():
    # the stacked ys are scratch of 2**41 bytes: malloc fails, the call raises, the process lives
    def f(x):
        ys = rune.scan(lambda c, _: (c + x, c), x, None, length=2 ** 38)[1]
        return rnp.sum(ys)

    with pytest.raises(MemoryError):
        rune.jit(f)(1.0)


def test_negative_integer_power_raises_like_numpy():
    with pytest.raises(ValueError, match="negative integer powers"):
        rune.jit(lambda a, b: a ** b)(np.arange(3), np.array([1, -1, 2]))


# ------------------------------------------------------------- caches


def _run_fresh(code: str, cache_dir, **env) -> str:
    full_env = dict(os.environ, RUNE_JIT_CACHE_DIR=str(cache_dir), **env)
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=full_env,
                          capture_output=True, text=True, check=True).stdout.strip()


PROGRAM = """
    import numpy as np, rune_jit as rune, rune_jit.numpy as rnp
    from rune_jit._src.backend.cpu import runtime
    HALF = [0.5]  # a list: f is traced in every process, and its code found by its IR
    f = rune.jit(lambda xs: rune.scan(lambda c, x: (c * HALF[0] + rnp.sin(x),) * 2, 0.0, xs)[0])
    print(float(f(np.linspace(0, 1, 50))), runtime.stats["compiled"], runtime.stats["loaded"])
"""


def test_second_process_loads_from_disk_without_compiling(tmp_path):
    first = _run_fresh(PROGRAM, tmp_path).split()
    second = _run_fresh(PROGRAM, tmp_path).split()
    assert first[1:] == ["1", "0"] and second[1:] == ["0", "1"]
    assert first[0] == second[0]


@pytest.mark.slow
def test_corrupt_entry_is_recompiled(tmp_path):
    _run_fresh(PROGRAM, tmp_path)
    (entry,) = list(tmp_path.rglob("*.bin"))
    entry.write_bytes(entry.read_bytes()[:-100])  # cut short
    assert _run_fresh(PROGRAM, tmp_path).split()[1:] == ["1", "0"]
    entry.write_bytes(entry.read_bytes()[:40] + b"x" * 8 + entry.read_bytes()[48:])  # flipped
    assert _run_fresh(PROGRAM, tmp_path).split()[1:] == ["1", "0"]
    assert _run_fresh(PROGRAM, tmp_path).split()[1:] == ["0", "1"]  # rewritten whole


@pytest.mark.slow  # a process or two of its own (the quick run's 5 minutes: issue 32)
def test_entries_that_check_out_but_do_not_load_are_compiled_again(tmp_path, monkeypatch):
    """Written whole (the checksum holds) but unusable here: code another machine's
    libraries could link, or metadata of another shape."""
    from rune_jit._src.call import disk_cache as cache

    _run_fresh(PROGRAM, tmp_path)
    (entry,) = list(tmp_path.rglob("*.bin"))
    k = entry.name[:-len(".bin")]
    monkeypatch.setenv("RUNE_JIT_CACHE_DIR", str(tmp_path))
    meta, _ = cache.load(k)
    for bad in [(meta, b"not an object file"), ({}, b"")]:
        cache.store(k, *bad)
        assert _run_fresh(PROGRAM, tmp_path).split()[1:] == ["1", "0"]


@pytest.mark.slow
def test_cache_can_be_disabled(tmp_path):
    _run_fresh(PROGRAM, tmp_path, RUNE_JIT_CACHE="0")
    assert [traced(tmp_path, RUNE_JIT_CACHE="0")[0] for _ in range(2)] == [3, 3]
    assert not [p for p in tmp_path.rglob("*") if p.is_file()]


TRACED = """
    import os, numpy as np, rune_jit as rune, rune_jit.numpy as rnp
    from rune_jit._src.backend.cpu import runtime
    SCALE = float(os.environ.get("SCALE", "2"))
    W = np.arange(3.0) * float(os.environ.get("W", "1"))
    def helper(x):
        return x * SCALE
    def f(xs):
        last = rune.scan(lambda c, x: (c + x, c), 0.0, xs)[0]
        return {"sum": rnp.sum(helper(xs) * W), "last": last}
    xs = np.arange(3.0)
    out = rune.jit(f)(xs)
    g = rune.jit(rune.grad(lambda xs: f(xs)["sum"]))(xs)
    v = rune.jit(rune.vmap(helper))(xs)
    print(runtime.stats["traced"], float(out["sum"]), float(out["last"]), float(g.sum()),
          float(v.sum()), runtime.stats["compiled"])
"""


def traced(tmp_path, program=TRACED, **env):
    """-> (programs traced, f's sum, f's last carry, the gradient's sum, the vmapped
    helper's sum, programs compiled), with saved programs on (they are opt-in)."""
    env.setdefault("RUNE_JIT_SAVE_TRACES", "1")
    traces, *values, compiled = _run_fresh(program, tmp_path, **env).split()
    return [int(traces), *map(float, values), int(compiled)]


def test_second_process_finds_the_program_without_tracing(tmp_path):
    first = traced(tmp_path)
    assert first == [3, 10.0, 3.0, 6.0, 6.0, 3]  # sum(2 x W), 0+1+2, sum(2 W), sum(2 x)
    assert traced(tmp_path) == [0, 10.0, 3.0, 6.0, 6.0, 0]


def test_saved_programs_are_opt_in_and_compiled_code_is_cached_by_default(tmp_path):
    assert traced(tmp_path, RUNE_JIT_SAVE_TRACES="0") == [3, 10.0, 3.0, 6.0, 6.0, 3]
    assert traced(tmp_path, RUNE_JIT_SAVE_TRACES="0") == [3, 10.0, 3.0, 6.0, 6.0, 0]
    assert not list(tmp_path.rglob("*.prog"))


@pytest.mark.parametrize("change,want", [
    (dict(SCALE="3"), [3, 15.0, 3.0, 9.0, 9.0]),  # a global number the traced code reads
    # a global array (helper does not read it); the code of a function it calls: each
    # two processes of its own, so in the slow run (the quick run's 5 minutes: issue 32)
    pytest.param(dict(W="5"), [2, 50.0, 3.0, 30.0, 6.0], marks=pytest.mark.slow),
    pytest.param("x * SCALE + 1", [3, 13.0, 3.0, 6.0, 9.0], marks=pytest.mark.slow),
])
def test_a_change_to_what_the_trace_read_traces_again(tmp_path, change, want):
    traced(tmp_path)
    if isinstance(change, dict):
        got = traced(tmp_path, **change)
    else:
        got = traced(tmp_path, TRACED.replace("return x * SCALE", f"return {change}"))
    assert got[:5] == want


@pytest.mark.slow  # a process or two of its own (the quick run's 5 minutes: issue 32)
def test_a_function_that_reaches_state_is_traced_in_every_process(tmp_path):
    program = TRACED.replace("SCALE = float(", "OPTIONS = [1]\n    SCALE = float(").replace(
        "x * SCALE", "x * SCALE * OPTIONS[0]")
    assert traced(tmp_path, program)[0] == traced(tmp_path, program)[0] == 3


@pytest.mark.slow  # a process or two of its own (the quick run's 5 minutes: issue 32)
def test_a_saved_program_is_one_file_and_a_corrupt_one_traces_again(tmp_path):
    traced(tmp_path)
    for entry in tmp_path.rglob("*.bin"):
        entry.unlink()
    assert traced(tmp_path) == [0, 10.0, 3.0, 6.0, 6.0, 0]  # the record holds the code
    for record in tmp_path.rglob("*.prog"):
        record.write_bytes(record.read_bytes()[:-3])
    assert traced(tmp_path) == [3, 10.0, 3.0, 6.0, 6.0, 3]


def test_digest_covers_code_captures_and_static_arguments():
    from rune_jit._src.call.code_digest import digest

    def scaled(k):
        return lambda x: x * k

    class Options:
        pass

    assert digest(scaled(2.0)) == digest(scaled(2.0)) != digest(scaled(3.0))
    assert digest(lambda x: x + 1) != digest(lambda x: x - 1)
    assert digest(scaled(np.ones(2))) != digest(scaled(np.zeros(2)))
    assert digest(rune.grad(scaled(2.0))) != digest(rune.vmap(scaled(2.0)))
    assert digest(rune.vmap(rnp.sin)) != digest(rune.vmap(rnp.cos))
    assert digest(scaled(1.0), (3,)) != digest(scaled(1.0), (4,))
    marked = [scaled(1.0), scaled(1.0)]
    marked[0].k, marked[1].k = 1, 2
    assert digest(marked[0]) != digest(marked[1])  # attributes the code may read
    assert digest(scaled([1.0])) is None and digest(scaled(Options())) is None
    assert digest(scaled(os)) is None  # a module that is not rune_jit's, NumPy's or Python's


def _user_module(**attributes) -> types.ModuleType:
    mylib = types.ModuleType("mylib")
    exec("def g(x):\n    return x * scale", mylib.__dict__)
    mylib.__dict__.update(attributes)
    return mylib


def _calls_user_module(mylib: types.ModuleType, body: str = "mylib.g(x) + 1.0"):
    namespace = {"mylib": mylib, "__name__": "user_script"}
    exec(f"def f(x):\n    return {body}", namespace)
    return namespace["f"]


def test_digest_of_a_user_module_covers_what_the_code_reads_from_it():
    from rune_jit._src.call.code_digest import digest

    two, three = _user_module(scale=2.0), _user_module(scale=3.0)
    assert digest(_calls_user_module(two)) == digest(_calls_user_module(_user_module(scale=2.0)))
    assert digest(_calls_user_module(two)) != digest(_calls_user_module(three))
    other_code = _user_module(scale=2.0)
    exec("def g(x):\n    return x / scale", other_code.__dict__)
    assert digest(_calls_user_module(two)) != digest(_calls_user_module(other_code))
    unread = _user_module(scale=2.0, log=[])  # state the code does not name
    assert digest(_calls_user_module(unread)) == digest(_calls_user_module(two))
    read = _user_module(scale=2.0, log=[])
    assert digest(_calls_user_module(read, "mylib.g(x) + len(mylib.log)")) is None
    lazy = _user_module(scale=2.0, __getattr__=lambda name: 1.0)
    assert digest(_calls_user_module(lazy, "mylib.g(x) + mylib.offset")) is None


@pytest.mark.slow  # a process or two of its own (the quick run's 5 minutes: issue 32)
def test_a_function_calling_a_user_module_is_found_by_the_next_process(tmp_path):
    (tmp_path / "mylib.py").write_text("SCALE = 2.0\ndef g(x):\n    return x * SCALE\n")
    program = """
        import os, sys, numpy as np, rune_jit as rune
        from rune_jit._src.backend.cpu import runtime
        sys.path.insert(0, os.environ["LIB"])
        import mylib
        y = rune.jit(lambda x: mylib.g(x) + 1.0)(np.float64(1.0))
        print(runtime.stats["traced"], float(y))
    """
    def run():
        return _run_fresh(program, tmp_path / "cache", LIB=str(tmp_path),
                          PYTHONDONTWRITEBYTECODE="1", RUNE_JIT_SAVE_TRACES="1").split()

    assert run() == ["1", "3.0"] and run() == ["0", "3.0"]
    (tmp_path / "mylib.py").write_text("SCALE = 5.5\ndef g(x):\n    return x * SCALE\n")
    assert run() == ["1", "6.5"]


def test_loop_outside_jit_runs_compiled_and_cached():
    before = dict(runtime.stats)
    xs = np.linspace(0, 1, 7)
    step = lambda c, x: (c + x * 3.25, c)  # noqa: E731
    for _ in range(3):
        carry, ys = rune.scan(step, 0.0, xs)
    compiled = runtime.stats["compiled"] + runtime.stats["loaded"] - before["compiled"] - before[
        "loaded"]
    assert compiled <= 1  # once for the program, then from the in-memory cache
    np.testing.assert_allclose(carry, np.sum(xs * 3.25))


# ------------------------------------------------------------- threads


def test_threads_call_one_jitted_function_at_once():
    f = rune.jit(rune.vmap(newton))
    inputs = [np.linspace(1, 100 + k, 5000) for k in range(8)]
    results: dict = {}

    def work(k):
        results[k] = f(inputs[k])

    threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for k in range(8):
        np.testing.assert_allclose(results[k], np.sqrt(inputs[k]), rtol=1e-12)


def test_concurrent_first_calls_compile_once():
    before = runtime.stats["compiled"] + runtime.stats["loaded"]
    f = rune.jit(lambda x: rnp.exp(x) * 1.2345678)
    barrier = threading.Barrier(4)

    def work():
        barrier.wait()
        f(np.ones(11))

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert runtime.stats["compiled"] + runtime.stats["loaded"] - before == 1


def test_unresolved_symbol_fails_when_linking_not_when_called():
    from rune_jit._src.backend.cpu.runtime import llvm

    code = """
    declare double @no_such_function_in_this_process(double)
    define double @calls_missing(double %x) {
      %y = call double @no_such_function_in_this_process(double %x)
      ret double %y
    }
    """
    obj = llvm.emit_object(llvm.optimize(textwrap.dedent(code)))
    with pytest.raises(RuntimeError, match="no_such_function_in_this_process"):
        llvm.link(obj, ["calls_missing"])
    with pytest.raises(RuntimeError, match="materialize|not found|Symbols"):
        llvm.lljit_link(obj, ["calls_missing"], {})


LINKED = """
    @table = constant [4 x double] [double 1.0, double 2.0, double 4.0, double 8.0]
    @counter = global i64 0
    declare double @sin(double)
    define double @mix(double %x, i64 %i) {
      %p = getelementptr [4 x double], ptr @table, i64 0, i64 %i
      %t = load double, ptr %p
      %s = call double @sin(double %x)
      %n = load i64, ptr @counter
      %n1 = add i64 %n, 1
      store i64 %n1, ptr @counter
      %y = fmul double %s, %t
      ret double %y
    }
"""


def _mix(link) -> list[float]:
    import ctypes

    from rune_jit._src.backend.cpu.runtime import llvm

    obj = llvm.emit_object(llvm.optimize(textwrap.dedent(LINKED)))
    keep, (address,) = link(obj, ["mix"])
    mix = ctypes.CFUNCTYPE(ctypes.c_double, ctypes.c_double, ctypes.c_int64)(address)
    return [mix(0.5, i) for i in range(4)] + [type(keep).__name__]


def test_object_loader_agrees_with_lljit():
    """Constants, writable data and a call into libm, loaded by rune_jit's own loader
    (x86-64 Linux) and by LLJIT."""
    from rune_jit._src.backend.cpu.runtime import llvm

    ours, theirs = _mix(llvm.link), _mix(lambda obj, syms: llvm.lljit_link(obj, syms, {}))
    assert ours[:4] == theirs[:4] == [math.sin(0.5) * 2.0 ** i for i in range(4)]
    if sys.platform.startswith("linux") and platform.machine() == "x86_64":
        assert ours[4] == "Image" and theirs[4] == "ResourceTracker"


def test_object_loader_refuses_what_is_not_an_object():
    from rune_jit._src.backend.cpu.runtime import elf_loader, llvm

    obj = llvm.emit_object(llvm.optimize(textwrap.dedent(LINKED)))
    for bad in (b"", b"not an object file", obj[:100], obj[:len(obj) // 2]):
        with pytest.raises(elf_loader.Unsupported):
            elf_loader.load(bad, ["mix"], lambda name: None)


@pytest.mark.parametrize("ir_text", [
    "@n = thread_local global i64 0\ndefine i64 @f() {\n  %v = load i64, ptr @n\n  ret i64 %v\n}",
    "@llvm.global_ctors = appending global [1 x { i32, ptr, ptr }] "
    "[{ i32, ptr, ptr } { i32 65535, ptr @f, ptr null }]\n@n = global i64 0\n"
    "define void @f() {\n  store volatile i64 1, ptr @n\n  ret void\n}",
], ids=["thread-local", "constructor"])
def test_object_loader_leaves_what_it_cannot_run_faithfully_to_lljit(ir_text):
    from rune_jit._src.backend.cpu.runtime import elf_loader, llvm

    obj = llvm.emit_object(llvm.optimize(ir_text))
    with pytest.raises(elf_loader.Unsupported):
        elf_loader.load(obj, ["f"], lambda name: None)


def test_objects_the_loader_does_not_handle_go_to_lljit(monkeypatch):
    from rune_jit._src.backend.cpu.runtime import elf_loader, llvm

    monkeypatch.setattr(elf_loader, "RELOCATIONS", {})  # every relocation unknown
    out = _mix(llvm.link)
    assert out[:4] == [math.sin(0.5) * 2.0 ** i for i in range(4)]
    assert out[4] == "ResourceTracker"


def test_a_small_state_recurrence_keeps_its_state_apart():
    """LLVM's SLP vectorizer would pack a 2-vector carry into one register, and the next
    step's sin would wait for the whole update (see llvm.SLP_THRESHOLD)."""
    from rune_jit._src.backend.cpu.runtime import llvm

    def pendulum(s0, xs):
        def step(s, x):
            n = s + 0.01 * rnp.stack([s[1], x - rnp.sin(s[0]) - 0.5 * s[1]])
            return n, n[0]
        return rune.scan(step, s0, xs)

    s0, xs = np.array([1.0, 0.0]), np.linspace(-1, 1, 50)
    optimized = str(llvm.optimize(rune.jit(pendulum).lower(s0, xs).llvm_ir))
    assert "phi double" in optimized and "phi <2 x double>" not in optimized
    np.testing.assert_allclose(rune.jit(pendulum)(s0, xs)[1], pendulum(s0, xs)[1], rtol=1e-13)


# ------------------------------------------------------------- the native entry


def test_native_entry_falls_back_for_every_other_call():
    f = rune.jit(lambda x, y: (x * y, x + y))
    a, b = np.arange(3.0), np.ones(3)
    f(a, b)  # compiles and installs the entry for this signature
    for x, y in [(a, b), (a[::-1], b), (a.astype(np.float32), b), (np.ones(4), np.ones(4)),
                 (2.0, b), (a.reshape(3, 1), b)]:
        got = f(x, y)
        np.testing.assert_allclose(got[0], np.asarray(x) * y)
        np.testing.assert_allclose(got[1], np.asarray(x) + y)
    assert f(y=b, x=a)[1].tolist() == [1.0, 2.0, 3.0]  # keywords take the Python path
    with pytest.raises(TypeError):
        f(a)


def misaligned(values: np.ndarray) -> np.ndarray:
    """A float64 array at an address that is not a multiple of 8."""
    raw = np.zeros(values.nbytes + 1, np.uint8)
    out = raw[1:].view(np.float64)
    out[...] = values
    assert not out.flags.aligned
    return out


@pytest.mark.parametrize("wrap", [lambda y: y, lambda y: {"y": y}], ids=["entry", "no entry"])
def test_arrays_lookalikes_take_the_checked_path(wrap):
    """A NumPy scalar has a 0-d array's dtype, shape and strides, and a misaligned array
    a contiguous one's: neither may reach native code as the array it resembles."""
    f = rune.jit(lambda x: wrap(x * 2))
    for first in (np.asarray(1.5), np.arange(3.0)):
        f(first)  # the signature the fast paths now know
    assert tree.leaves(f(np.float64(3.0))) == [6.0]
    np.testing.assert_array_equal(tree.leaves(f(misaligned(np.arange(3.0))))[0], [0.0, 2.0, 4.0])


def test_native_entry_keeps_reference_counts():
    f = rune.jit(lambda x: x * 2)
    x = np.ones(5)
    f(x)
    gc.collect()
    gc.disable()  # a collection in between would free other arrays, and their dtype counts
    try:
        before = sys.getrefcount(x), sys.getrefcount(np.dtype(np.float64))
        outs = [f(x) for _ in range(1000)]
        after = sys.getrefcount(x), sys.getrefcount(np.dtype(np.float64))
    finally:
        gc.enable()
    # each result holds its dtype; an immortal one (NumPy's builtin dtypes on Python 3.13)
    # keeps its count
    held = 1000 if before[1] < 1 << 30 else 0
    assert after == (before[0], before[1] + held)
    last = outs.pop()
    count = sys.getrefcount(last)  # outside the assert: pytest's rewriting holds references
    assert count == 2 and last.flags.writeable


@pytest.mark.slow  # a process or two of its own (the quick run's 5 minutes: issue 32)
def test_dropped_jitted_functions_are_collected_safely(tmp_path):
    """The collector may free a jitted function and its entry in any order: freed
    memory is poisoned here (glibc fills it with 0xff) so that an entry reading a freed
    method definition crashes the process rather than passing by luck."""
    code = """
        import gc, weakref, numpy as np, rune_jit as rune
        x, big, refs, sums = np.ones(3), np.ones(1 << 18), [], set()
        for i in range(50):
            f = rune.jit(lambda x: x * 2.0)
            f(x), f(x)  # the second call runs the native entry
            g = rune.jit(lambda x: rune.scan(lambda c, r: (c + r, c * r), 0.0, x))
            sums.add(float(g(big)[1].sum()))  # a pooled result, dropped at once
            refs.append(weakref.ref(f))
            del f, g
            gc.collect()
        print(sum(r() is not None for r in refs), sorted(sums))
    """
    out = _run_fresh(code, tmp_path, PYTHONMALLOC="malloc", MALLOC_PERTURB_="255")
    n = 1 << 18
    assert out == f"0 [{float(sum(range(n)))}]"  # none leaked; c * 1 = c = 0, 1, ..., n-1


def test_results_and_code_can_die_as_the_interpreter_exits(monkeypatch):
    """As the interpreter exits, module globals become None before the last objects
    die: a pooled result and loaded code must go quietly then."""
    from rune_jit._src.backend.cpu.runtime import elf_loader, llvm, pool

    result = rune.jit(lambda x: x * 2.0)(np.ones(1 << 18))  # from the pool
    code = llvm.link(llvm.emit_object(llvm.optimize(textwrap.dedent(LINKED))), ["mix"])
    raised = []
    monkeypatch.setattr(sys, "unraisablehook", raised.append)
    for module in (pool, elf_loader):
        for name in [n for n in vars(module) if not n.startswith("__")]:
            monkeypatch.setattr(module, name, None)
    del result, code
    gc.collect()
    assert raised == []


def test_native_entry_outlives_its_jitted_function():
    f = rune.jit(lambda x: x * 2.0)
    x = np.ones(3)
    f(x)
    call = type(f).__call__  # the entry itself: it holds what its slow path calls
    if type(call).__name__ == "function":  # CPython 3.10: no entry, calls take Python's path
        call = functools.partial(call, f)
    del f
    gc.collect()
    np.testing.assert_array_equal(call(x), [2.0, 2.0, 2.0])
    np.testing.assert_array_equal(call(np.ones(2)), [2.0, 2.0])  # the slow path


def test_native_entry_raises_the_programs_errors():
    f = rune.jit(rune.vmap(lambda a: newton(a, 3)))
    lanes = np.array([1.0, 16.0, 1e6])
    for _ in range(3):  # the first call compiles; later ones go through the entry
        with pytest.raises(rune.IterateError) as err:
            f(lanes)
        assert str(err.value).endswith("in lane 1")


def test_backend_interpret_runs_loops_without_compiling(tmp_path):
    code = """
        import numpy as np, rune_jit as rune
        from rune_jit._src.backend.cpu import runtime
        carry, ys = rune.scan(lambda c, x: (c + x, c), 0.0, np.arange(4.0))
        print(float(carry), runtime.stats["compiled"] + runtime.stats["loaded"])
    """
    assert _run_fresh(code, tmp_path, RUNE_JIT_BACKEND="interpret").split() == ["6.0", "0"]
    assert _run_fresh(code, tmp_path).split() == ["6.0", "1"]


# ------------------------------------------------------------- fission


def rnn_loss(W, U, xs):
    step = lambda h, x: (rnp.tanh(W @ h + U @ x), None)  # noqa: E731
    return rnp.sum(rune.scan(step, np.zeros(W.shape[0]), xs)[0])


def test_weight_gradients_are_summed_after_the_loop(monkeypatch):
    """64 x 64 weights: their gradients are two matrix products after the loop, over
    one stack of the hidden state's cotangent (tests/backend/test_fission.py: when they are not)."""
    rng = np.random.default_rng(3)
    W, U, xs = rng.normal(size=(64, 64)) * 0.05, rng.normal(size=(64, 64)) * 0.1, rng.normal(
        size=(9, 64))
    g = rune.grad(rnn_loss, argnums=(0, 1))
    eqns = rune.jit(g).lower(W, U, xs).region.eqns
    (back,) = [i for i, e in enumerate(eqns) if e.prim.name == "scan" and e.params["reverse"]]
    nc = eqns[back].params["num_carry"]
    assert (64, 64) not in [v.type.shape for v in eqns[back].outputs[:nc]]  # none carried
    assert len(eqns[back].outputs[nc:]) == 1  # the cotangent they share, stacked once
    assert sum(e.prim.name == "dot_general" for e in eqns[back + 1:]) == 2  # summed after
    got = rune.jit(g)(W, U, xs)
    monkeypatch.setattr(config, "backend", "interpret")
    for a, b in zip(got, g(W, U, xs)):  # (sums in another order: atol for those near 0)
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-15)


def test_loop_invariant_work_is_hoisted(monkeypatch):
    W = np.random.default_rng(4).normal(size=(5, 5))
    f = lambda xs: rune.scan(lambda c, x: (rnp.tanh(W.T @ c) + x, None), np.ones(5), xs)[0]  # noqa
    xs = np.ones((7, 5))
    (loop,) = [e for e in rune.jit(f).lower(xs).region.eqns if e.prim.name == "scan"]
    assert all(e.prim.name != "transpose" for e in loop.params["step"].eqns)  # taken once
    got = rune.jit(f)(xs)
    monkeypatch.setattr(config, "backend", "interpret")
    np.testing.assert_allclose(got, f(xs), rtol=1e-12)


@pytest.mark.slow  # a process or two of its own (the quick run's 5 minutes: issue 32)
def test_a_call_with_a_large_arena_returns_it_to_the_system():
    """A long gradient's tapes (here 300 MiB of scratch) are not kept after the call as
    the thread's scratch: peak memory is what a long gradient costs, not kept memory."""
    f = rune.jit(rune.grad(lambda x: rune.scan(lambda c, r: (rnp.sin(c) * r, None),
                                               x[0], x)[0]))
    x = np.full(10**7, 0.9)
    g = f(x)
    code = next(iter(f.cache.values())).executable.compiled
    assert code.meta.scratch_bytes > runtime.KEEP_SCRATCH
    assert not hasattr(code.local, "buf")
    np.testing.assert_allclose(f(x[:5]), rune.grad(lambda x: rune.scan(
        lambda c, r: (rnp.sin(c) * r, None), x[0], x)[0])(x[:5]))
    assert g.shape == x.shape


def test_static_values_equal_by_eq_but_not_alike_get_their_own_programs():
    """Regression: 3, 3.0 and True are equal (and hash alike), and so are 0.0 and -0.0;
    the cache took one for the other, so a program traced with 3 ran for 3.0 (an int32
    result where NumPy gives float64) and 1 / -0.0 gave inf. Each call is made three
    times: the general path, the quick path and the native entry each answer one."""
    x = np.ones(2, np.int32)
    times = rune.jit(lambda x, n: x * n, static_argnums=1)
    over = rune.jit(lambda x, n: x / n[0], static_argnames="n")
    for _ in range(3):
        for n in (3, 3.0, True, np.float32(3.0)):
            got = times(x, n)
            assert got.dtype == (x * n).dtype and got.tolist() == (x * n).tolist(), n
        for n in ((0.0,), (-0.0,), (2,)):
            with np.errstate(divide="ignore"):
                np.testing.assert_array_equal(over(x, n=n), x / np.float64(n[0]))


@pytest.mark.parametrize("shape", [(300, 5), (7, 3, 5), (40, 15), (6, 1)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_maps_over_a_short_last_axis_are_numpys(shape, dtype):
    """A stored map whose last axis is short runs as one flat loop (each index from the
    flat one by quotient and remainder): values, broadcasting along either axis, in a
    scan step too, against NumPy."""
    rng = np.random.default_rng(1)
    x = rng.normal(size=shape).astype(dtype)
    row = rng.normal(size=shape[:-1] + (1,)).astype(dtype)
    col = rng.normal(size=shape[-1:]).astype(dtype)

    def f(x, row, col):
        return rnp.exp(-rnp.abs(x - row)) * col + rnp.tanh(x)

    want = f(x, row, col)
    np.testing.assert_allclose(rune.jit(f)(x, row, col), want, rtol=1e-5, atol=1e-6)
    looped = rune.jit(lambda x, row, col: rune.scan(
        lambda c, _: (f(c, row, col), None), x, length=3)[0])(x, row, col)
    np.testing.assert_allclose(looped, f(f(f(x, row, col), row, col), row, col), rtol=1e-4,
                               atol=1e-5)


@pytest.mark.parametrize("m, k, n", [(300, 5, 5), (4, 7, 9), (9, 8, 3), (6, 3, 5), (2, 6, 3)])
def test_short_contractions_are_numpys_and_differentiate(m, k, n):
    """Contractions of up to 8 terms are sums of products per element (lazy up to 4,
    stored by a flat loop up to 8): values as NumPy's, eager and jitted, and gradients
    by finite differences."""
    rng = np.random.default_rng(2)
    a, b = rng.normal(size=(m, k)), rng.normal(size=(k, n))

    def f(a, b):
        return rnp.sum(rnp.exp(0.1 * (a @ b)) * rnp.arange(n))

    want = np.sum(np.exp(0.1 * (a @ b)) * np.arange(n))
    np.testing.assert_allclose(rune.jit(f)(a, b), want, rtol=1e-12)
    np.testing.assert_allclose(rune.jit(lambda a, b: a @ b)(a, b), a @ b, rtol=1e-12)
    rune.check_grads(f, a, b)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64])
def test_long_contractions_into_few_outputs_are_numpys(dtype):
    """8 to 28 outputs (AVX-512; 8 to 12 below) over a long k are accumulated in
    registers in one pass over k (linalg._few_outputs_dot), whatever the operands'
    layout: stored or lazy, k first or last, batched, two contracted axes; in a scan
    step, under vmap and grad."""
    rng = np.random.default_rng(5)
    x = (rng.normal(size=(300, 5)) * 4).astype(dtype)
    g = (rng.normal(size=(300, 5)) * 4).astype(dtype)
    tol = dict(rtol=1e-5, atol=1e-3) if dtype == np.float32 else dict(rtol=1e-12)
    cases = {
        "stored, k first": (lambda x, g: x.T @ g, lambda x, g: x.T @ g),
        "lazy, k first": (lambda x, g: (x * 2 + g).T @ g, lambda x, g: (x * 2 + g).T @ g),
        "k last": (lambda x, g: x.T[:3] @ g, lambda x, g: x.T[:3] @ g),
        "batched": (lambda x, g: rnp.einsum("bki,bkj->bij", x.reshape(3, 100, 5),
                                            g.reshape(3, 100, 5)),
                    lambda x, g: np.einsum("bki,bkj->bij", x.reshape(3, 100, 5),
                                           g.reshape(3, 100, 5))),
        "two contracted axes": (lambda x, g: rnp.einsum("abi,abj->ij", x.reshape(30, 10, 5),
                                                        g.reshape(30, 10, 5)),
                                lambda x, g: np.einsum("abi,abj->ij", x.reshape(30, 10, 5),
                                                       g.reshape(30, 10, 5))),
    }
    for name, (f, want) in cases.items():
        np.testing.assert_allclose(rune.jit(f)(x, g), want(x, g), **tol, err_msg=name)
    vm = rune.jit(rune.vmap(lambda x, g: x.T @ g))(np.stack([x, g]), np.stack([g, x]))
    np.testing.assert_allclose(vm, np.stack([x.T @ g, g.T @ x]), **tol)
    if dtype != np.float64:
        return

    def train(w, x, g):  # a gradient step's xᵀ (x w - g): SX's shape
        def step(w, _):
            return w - 1e-4 * (x.T @ (x @ w - g)), None
        return rune.scan(step, w, length=5)[0]

    w0, want = np.eye(5), np.eye(5)
    for _ in range(5):
        want = want - 1e-4 * (x.T @ (x @ want - g))
    np.testing.assert_allclose(rune.jit(train)(w0, x, g), want, rtol=1e-12)
    rune.check_grads(lambda w: rnp.sum(rnp.tanh(train(w, x / 4, g / 4))), w0 * 0.3)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_big_products_are_numpys(dtype):
    """Products with enough work call OpenBLAS's gemm (backend/cpu/rules/blas.py) when its
    kernels are as wide as the register tiles', else run the tiles; both in parts fixed
    by shape: by rows of a big output, by blocks of a long contraction into a small one
    (partial products summed in order). Each operand is read in place either way round,
    through a transpose too, unless it is lazy, strided or a transpose that reorders the
    free axes, which are laid out first; batched, in a scan step, under vmap and grad,
    and on a reverse-mode tape. The next test runs this one under the other kernels."""
    from rune_jit._src.backend.cpu.rules import blas

    rng = np.random.default_rng(9)
    a, b = (rng.normal(size=(2, 256, 256)) / 16).astype(dtype)
    t, f = rng.normal(size=(2, 1 << 16, 16)).astype(dtype)
    x = rng.normal(size=(40, 50, 160)).astype(dtype)
    w = rng.normal(size=(160, 70)).astype(dtype)
    assert blas.parts(256, 256, 256)[0] == "rows" and blas.parts(256, 256, 256)[1] > 1
    assert blas.parts(16, 16, 1 << 16)[0] == "k" and blas.parts(16, 16, 1 << 16)[1] > 1
    calls_gemm = "gemm" in rune.jit(lambda a, b: a @ b).lower(a, b).llvm_ir
    assert calls_gemm == blas.usable(np.dtype(dtype), 256, 256, 256)
    tol = dict(rtol=2e-4, atol=1e-4) if dtype == np.float32 else dict(rtol=1e-11, atol=1e-12)
    cases = {
        "a b": (lambda a, b: a @ b, (a, b)),
        "aᵀ b": (lambda a, b: a.T @ b, (a, b)),
        "a bᵀ": (lambda a, b: a @ b.T, (a, b)),
        "aᵀ bᵀ": (lambda a, b: a.T @ b.T, (a, b)),
        "long k, small output": (lambda t, f: t.T @ f, (t, f)),
        "lazy and strided": (lambda a, b: (a * 2 + 1)[::2] @ b[:, 1:], (a, b)),
        "batched": (lambda a, b: rnp.stack([a, b]) @ rnp.stack([b, a]), (a, b)),
        "free axes reordered": (lambda x, w: rnp.transpose(x, (1, 0, 2)) @ w, (x, w)),
        "integers": (lambda a, b: (a * 8).astype(np.int64) @ (b * 8).astype(np.int64),
                     (a, b)),
    }
    for name, (fn, args) in cases.items():
        got = rune.jit(fn)(*args)
        want = fn(*[np.asarray(v) for v in args]) if name != "batched" else np.stack(
            [a @ b, b @ a])
        np.testing.assert_allclose(got, want, **tol, err_msg=name)
    vm = rune.jit(rune.vmap(lambda a, b: a.T @ b))(np.stack([a, b]), np.stack([b, a]))
    np.testing.assert_allclose(vm, np.stack([a.T @ b, b.T @ a]), **tol)
    if dtype != np.float64:
        return

    def carry(w, c0):  # C' = tanh(W C + 0.1): a product of 128^3 a step
        return rune.scan(lambda c, _: (rnp.tanh(w @ c + 0.1), c), c0, length=3)

    w128, c128 = a[:128, :128], b[:128, :128] * 4
    want_c, want_ys = c128, []
    for _ in range(3):
        want_ys.append(want_c)
        want_c = np.tanh(w128 @ want_c + 0.1)
    got_c, got_ys = rune.jit(carry)(w128, c128)
    np.testing.assert_allclose(got_c, want_c, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(got_ys, np.stack(want_ys), rtol=1e-12, atol=1e-15)
    # reverse mode: dW = sum over steps of g_t c_tᵀ, a product of the stacked steps
    loss = lambda w, c: rnp.sum(carry(w, c)[0] ** 2)  # noqa: E731
    rune.check_grads(loss, w128, c128)
    np.testing.assert_allclose(rune.jit(rune.grad(loss))(w128, c128),
                               rune.grad(loss)(w128, c128), rtol=1e-10, atol=1e-15)
    # in an iterate's step: the same three steps, each a product of 128³
    got = rune.jit(lambda w, c: rune.iterate(
        lambda s: (rnp.tanh(w @ s[0] + 0.1), s[1] + 1), (c, np.int64(0)),
        until=lambda s: s[1] >= 3, max_steps=5)[0])(w128, c128)
    np.testing.assert_allclose(got, want_c, rtol=1e-12, atol=1e-15)


@pytest.mark.slow  # a process or two of its own (the quick run's 5 minutes: issue 32)
def test_big_products_are_numpys_under_the_other_openblas_kernels():
    """Which products call gemm depends on OpenBLAS's kernels on a CPU with AVX-512
    (blas.py): the test above again, in a process asking for the other kernels, so that
    both paths run here (where the CPU has no AVX-512, both processes call gemm)."""
    from rune_jit._src.backend.cpu.rules import blas

    other = "Haswell" if blas.usable(np.dtype(np.float64), 256, 256, 256) else "SkylakeX"
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
         f"{__file__}::test_big_products_are_numpys"],
        env=dict(os.environ, OPENBLAS_CORETYPE=other), capture_output=True, text=True,
        timeout=600)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]


def test_small_solves_are_unrolled_and_numpys():
    """Systems of up to 4 rows are solved, and their LU factored (det, slogdet, inv), by
    unrolled code in registers (backend/cpu/rules/small_lu.py): with row swaps (a zero leading
    entry), batched, in a scan step, under vmap and grad; a singular system raises
    NumPy's LinAlgError from compiled code, in a loop step too, and its det is 0."""
    rng = np.random.default_rng(4)
    solve = rune.jit(rnp.linalg.solve)
    for n, k in [(1, 1), (2, 3), (3, 1), (4, 4)]:
        a, b = rng.normal(size=(n, n)), rng.normal(size=(n, k))
        a[0, 0] = 0.0 if n > 1 else a[0, 0]
        np.testing.assert_allclose(solve(a, b), np.linalg.solve(a, b), rtol=1e-12, atol=1e-13)
    a, b = rng.normal(size=(2, 3, 4, 4)), rng.normal(size=(2, 3, 4, 2))
    np.testing.assert_allclose(solve(a, b), np.linalg.solve(a, b), rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(rune.jit(rune.vmap(rnp.linalg.solve))(a[0], b[0]),
                               np.linalg.solve(a[0], b[0]), rtol=1e-12, atol=1e-13)
    m = rng.normal(size=(4, 4)) + 4 * np.eye(4)

    def steps(m, x0):
        return rune.scan(lambda x, _: (rnp.linalg.solve(m, x) + 0.5, None), x0, length=5)[0]

    want = np.ones((4, 2))
    for _ in range(5):
        want = np.linalg.solve(m, want) + 0.5
    np.testing.assert_allclose(rune.jit(steps)(m, np.ones((4, 2))), want, rtol=1e-12)
    rune.check_grads(lambda m: rnp.sum(steps(m, np.ones((4, 2))) ** 2), m)
    with pytest.raises(np.linalg.LinAlgError, match="singular"):
        rune.jit(steps)(np.zeros((4, 4)), np.ones((4, 2)))
    stack = rng.normal(size=(3, 4, 4))
    stack[1, :, 0] = 0.0  # singular: a zero column, skipped as getrf does
    for fn, np_fn in ((rnp.linalg.det, np.linalg.det), (rnp.linalg.inv, np.linalg.inv)):
        got = rune.jit(fn)(stack[[0, 2]])
        np.testing.assert_allclose(got, np_fn(stack[[0, 2]]), rtol=1e-11, atol=1e-13)
    np.testing.assert_allclose(rune.jit(rnp.linalg.det)(stack), np.linalg.det(stack),
                               rtol=1e-11, atol=1e-13)
    np.testing.assert_allclose(rune.jit(rnp.linalg.slogdet)(stack[0]),
                               np.linalg.slogdet(stack[0]), rtol=1e-12)

    def dets(m):
        return rune.scan(lambda c, _: (c * 0.5 + m, rnp.linalg.det(c)), m, length=3)[1]

    rune.check_grads(lambda m: rnp.sum(dets(m)), m)

    def refine(m, x0):  # in an iterate's step too
        return rune.iterate(lambda s: (rnp.linalg.solve(m, s[0]) + 0.5, s[1] + 1),
                            (x0, np.int64(0)), until=lambda s: s[1] >= 5, max_steps=9)[0]

    np.testing.assert_allclose(rune.jit(refine)(m, np.ones((4, 2))), want, rtol=1e-12)
    rune.check_grads(lambda m: rnp.sum(refine(m, np.ones((4, 2))) ** 2), m)
