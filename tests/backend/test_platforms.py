"""Platforms (docs/platforms.md): where compiling cannot work the first compile says so
and the interpreter still runs; the portable paths aarch64 takes, forced on here (the
LLJIT link, the thread pool without x86 instructions, Advanced SIMD math names)."""

import platform
import subprocess
import sys
import textwrap

import llvmlite.binding as llvm
import numpy as np
import pytest

import rune_jit as rune
import rune_jit.numpy as rnp
from rune_jit._src import backend, config
from rune_jit._src import platforms
from rune_jit._src.backend.cpu.runtime import elf_loader, pool_code, threads
from rune_jit._src.backend.cpu.codegen import mathlib
from rune_jit._src.backend.cpu.runtime import llvm as engine
from rune_jit._src.errors import UnsupportedPlatformError


@pytest.mark.parametrize("os_name, machine", [("linux", "x86_64"), ("linux", "aarch64"),
                                              ("linux", "arm64"), ("linux", "AMD64")])
def test_linux_on_x86_64_and_aarch64_compiles(os_name, machine):
    assert platforms.unsupported_reason(os_name, machine) is None


@pytest.mark.parametrize("os_name, machine, said", [
    ("darwin", "arm64", "needs Linux (this is darwin)"),
    ("win32", "AMD64", "needs Linux (this is win32)"),
    ("linux", "ppc64le", "x86-64 or aarch64 CPU (this is ppc64le)"),
    ("linux", "", "x86-64 or aarch64 CPU (this is unknown)")])
def test_other_platforms_get_a_clear_error_naming_them(monkeypatch, os_name, machine, said):
    monkeypatch.setattr(sys, "platform", os_name)
    monkeypatch.setattr(platform, "machine", lambda: machine)
    with pytest.raises(UnsupportedPlatformError, match="RUNE_JIT_BACKEND=interpret") as e:
        platforms.require_native()
    assert said in str(e.value)
    with pytest.raises(UnsupportedPlatformError):  # the backend is made first here
        backend.get.__wrapped__("native")


def run_as(os_name: str, machine: str, script: str) -> subprocess.CompletedProcess:
    """`script` in a fresh process that takes itself for `os_name` on `machine` from
    before rune_jit is imported. What reads the real platform at import loads first, as
    it would be real there: NumPy, llvmlite, sysconfig's data (named by sys.platform)."""
    pretend = (f"import sys, platform, sysconfig, numpy, llvmlite.binding\n"
               f"sysconfig.get_paths()\n"
               f"sys.platform = {os_name!r}\nplatform.machine = lambda: {machine!r}\n")
    return subprocess.run([sys.executable, "-c", pretend + textwrap.dedent(script)],
                          capture_output=True, text=True, timeout=120)


def test_elsewhere_import_works_and_the_first_compile_raises():
    done = run_as("darwin", "arm64", """
        import numpy as np
        import rune_jit as rune
        import rune_jit.numpy as rnp
        from rune_jit.errors import UnsupportedPlatformError
        print(float(rnp.sum(rnp.sin(np.array([0.5, 1.0])))))  # eager ops interpret
        try:
            rune.jit(lambda x: x * 2)(np.ones(3))
        except UnsupportedPlatformError as e:
            print("raised:", e)
    """)
    assert done.returncode == 0, done.stderr
    eager, raised = done.stdout.splitlines()
    assert float(eager) == pytest.approx(np.sin(0.5) + np.sin(1.0))
    assert raised.startswith("raised: rune_jit: compiled code needs Linux (this is darwin)")


def test_elsewhere_the_interpreter_runs_jit_loops_and_grads():
    done = run_as("win32", "AMD64", """
        import numpy as np
        import rune_jit as rune
        rune.config.backend = "interpret"
        f = rune.jit(rune.grad(lambda x: rune.scan(lambda c, r: (c * r, c), 1.0, x)[0]))
        print(f(np.array([1.0, 2.0, 3.0, 4.0])).round(6).tolist())
    """)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["[24.0,", "12.0,", "8.0,", "6.0]"]


def running_sin_sum(xs):
    return rune.scan(lambda c, x: (c + rnp.sin(x) * c, c), 1.0, xs)


KEPT: list = []  # what compiled code the tests made is mapped by, for the process's life


@pytest.mark.parametrize("jit_link", [False, True], ids=["runtimedyld", "jitlink"])
def test_code_linked_by_lljit_runs_as_the_elf_loader_s_does(monkeypatch, request, jit_link):
    """aarch64 objects are not the ELF loader's: they go to LLJIT (forced here), which
    links with JITLink on aarch64 (forced too: this machine's JITLink)."""
    scale = 1.25 if jit_link else 1.5  # a program of its own: compiled and linked now
    xs = np.linspace(0.0, 1.0, 7)
    linked = []
    if jit_link:
        threads.pool()  # made for this machine, before it takes itself for aarch64
        monkeypatch.setattr(engine, "target_arch", lambda: "aarch64")
        request.addfinalizer(mathlib.vector_variants.cache_clear)  # no _ZGVn* here
        KEPT.append(engine.engine.__wrapped__())
        monkeypatch.setattr(engine, "engine", lambda: linked.append(1) or KEPT[-1])

    def refuse(*args, **kw):
        raise elf_loader.Unsupported("forced")

    monkeypatch.setattr(elf_loader, "load", refuse)
    f = rune.jit(lambda xs: running_sin_sum(xs * scale)[0])
    np.testing.assert_allclose(f(xs), np.prod(1 + np.sin(xs * scale)), rtol=1e-13)
    np.testing.assert_allclose(rune.jit(rune.grad(f))(xs),
                               f(xs) * scale * np.cos(xs * scale) / (1 + np.sin(xs * scale)),
                               rtol=1e-12)
    assert bool(linked) == jit_link


def aarch64_object() -> bytes:
    llvm.initialize_all_targets()
    llvm.initialize_all_asmprinters()
    try:
        target = llvm.Target.from_triple("aarch64-unknown-linux-gnu")
    except RuntimeError:
        pytest.skip("this llvmlite has no AArch64 target")
    mod = llvm.parse_assembly(pool_code.module_ir("aarch64"))
    mod.triple = "aarch64-unknown-linux-gnu"
    return target.create_target_machine(jit=True).emit_object(mod)


def test_the_elf_loader_hands_aarch64_objects_on():
    with pytest.raises(elf_loader.Unsupported, match="x86-64"):
        elf_loader.load(aarch64_object(), ["rune.parallel_for"], lambda name: None)


def test_the_pool_on_aarch64_yields_and_reads_clock_gettime():
    ir_text = pool_code.module_ir("aarch64")
    assert "llvm.aarch64.hint" in ir_text and "@\"clock_gettime\"" in ir_text
    assert "x86" not in ir_text and "readcyclecounter" not in ir_text
    assert "x86.sse2.pause" in pool_code.module_ir("x86_64")
    assert len(aarch64_object()) > 0  # LLVM's AArch64 back end takes it


@pytest.mark.skipif(config.num_threads < 2, reason="RUNE_JIT_NUM_THREADS=1: no pool")
def test_the_portable_pool_runs_regions_with_the_same_bits(monkeypatch, request):
    """The pool as a machine without x86's PAUSE and time-stamp counter has it."""
    monkeypatch.setattr(engine, "target_arch", lambda: "riscv64")
    # math compiled now calls libm alone: forget that after the test
    request.addfinalizer(mathlib.vector_variants.cache_clear)
    monkeypatch.setattr(threads, "_pools", [])
    f = rune.jit(rune.vmap(lambda a: rune.iterate(
        lambda x: (x + a / x) / 2, a, until=lambda x: rnp.abs(x * x - a) <= 1e-12 * a,
        max_steps=200)))
    a = np.exp(np.random.default_rng(0).uniform(-10, 20, 8192 + 17))
    with threads.limit(1):
        alone = f(a)
    before = threads.regions()
    shared = f(a)
    assert threads.regions() == before + 1 and threads._pools  # the new pool ran it
    # its workers sleep in its code, and code compiled here calls it: it must stay mapped
    KEPT.extend(threads._pools)
    assert np.array_equal(alone, shared)
    np.testing.assert_allclose(shared, np.sqrt(a), rtol=1e-11)


def test_math_calls_name_glibc_s_advanced_simd_variants_on_aarch64(monkeypatch):
    monkeypatch.setattr(engine, "target_arch", lambda: "aarch64")
    monkeypatch.setattr(mathlib.llvm, "address_of_symbol", lambda s: 1)
    assert mathlib.vector_variants.__wrapped__("sin", False, 1) == (("_ZGVnN2v_sin", 2),)
    assert mathlib.vector_variants.__wrapped__("atan2", True, 2) == (("_ZGVnN4vv_atan2f", 4),)
    monkeypatch.setattr(mathlib.llvm, "address_of_symbol", lambda s: 0)  # glibc lacks it
    assert mathlib.vector_variants.__wrapped__("erf", False, 1) == ()
    monkeypatch.setattr(engine, "target_arch", lambda: "riscv64")
    assert mathlib.vector_variants.__wrapped__("sin", False, 1) == ()
