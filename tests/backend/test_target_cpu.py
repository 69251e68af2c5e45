"""The target CPU (RUNE_JIT_CPU, RUNE_JIT_CPU_FEATURES): code generated for another CPU
than this one, the choices by CPU following it, the cache key and the entries' stamp,
and the errors of bad settings and of code this machine cannot run. The settings are
changed in this process (config and the caches that depend on them); a subprocess only
where the environment must be read at import."""

import os
import subprocess
import sys
import textwrap
import weakref
from collections import OrderedDict
from functools import lru_cache

import numpy as np
import pytest

import rune_jit as rune
import rune_jit.numpy as rnp
from rune_jit._src import config
from rune_jit._src import target_cpu
from rune_jit._src.backend.cpu.rules import blas
from rune_jit._src.backend.cpu.runtime import llvm
from rune_jit._src.backend.cpu.codegen import mathlib
from rune_jit._src.backend.cpu import runtime
from rune_jit._src.backend.stats import counts

AVX512 = {"avx512f", "avx512bw", "avx512dq", "avx512vl", "avx512cd", "avx512vpopcntdq",
          "avx512fp16", "avx512bf16"}
X86_64_V3 = {"sse4.1", "sse4.2", "ssse3", "popcnt", "lzcnt", "bmi", "bmi2", "movbe", "avx",
             "avx2", "fma", "f16c"}
x86 = pytest.mark.skipif(not llvm.llvm.get_process_triple().startswith("x86_64"),
                         reason="x86-64 CPU names")
pytestmark = x86


def _forget_target() -> None:
    for cached in (llvm.target, llvm.target_machine, llvm.target_features, llvm.fingerprint,
                   mathlib.vector_variants, blas._wide_kernels):
        cached.cache_clear()


@pytest.fixture
def target(monkeypatch):
    """Set the target CPU (and features) for the rest of the test; the host's again after."""
    def set_target(cpu: str, features: str = "") -> None:
        monkeypatch.setattr(config, "cpu", cpu)
        monkeypatch.setattr(config, "cpu_features", features)
        _forget_target()
    yield set_target
    monkeypatch.undo()
    _forget_target()


@pytest.fixture
def forged_host(monkeypatch):
    """Pretend this machine has these features (LLVM's names) and no others."""
    def forge(features) -> None:
        monkeypatch.setattr(target_cpu, "host_features", lambda: frozenset(features))
        _forget_target()
    yield forge
    monkeypatch.undo()
    _forget_target()


def newton(a):
    return rune.iterate(lambda x: (x + a / x) / 2, a,
                        until=lambda x: rnp.abs(x * x - a) <= 1e-12 * a, max_steps=200)


def host_has_avx512() -> bool:
    return "avx512f" in target_cpu.host_features()


# ------------------------------------------------------------- the code generated


def test_haswell_code_uses_no_zmm_register_where_the_host_does(target):
    f = rune.jit(rune.vmap(newton))  # lane blocks: explicit vectors of the target's width
    a = np.linspace(1.0, 2.0, 64)
    target("haswell")
    asm = f.lower(a).asm
    assert "zmm" not in asm and "ymm" in asm
    if host_has_avx512():
        target("host")
        assert "zmm" in f.lower(a).asm


@pytest.mark.parametrize("cpu, bits", [("haswell", 256), ("x86-64", 128), ("x86-64-v4", 512)])
def test_vector_width_follows_the_target(target, cpu, bits):
    target(cpu)
    assert llvm.vector_bits() == bits
    sin64 = [lanes for _, lanes in mathlib.vector_variants("sin", False, 1)]
    assert max(sin64, default=1) <= bits // 64  # libmvec's widths too


def test_the_features_of_the_psabi_levels(target):
    target("x86-64")
    assert llvm.target_features() == frozenset()
    target("x86-64-v3")
    assert llvm.target_features() == X86_64_V3
    target("x86-64-v4")
    assert llvm.target_features() == X86_64_V3 | {"avx512f", "avx512bw", "avx512dq",
                                                   "avx512vl", "avx512cd"}
    target("x86-64-v3", "+avx512f")
    assert "avx512f" in llvm.target_features()
    target("skylake-avx512", "-avx512f")
    assert not llvm.target_features() & AVX512 and llvm.vector_bits() == 256


def test_the_host_target_has_the_hosts_features(target):
    target("host")
    probed = target_cpu.probed_features(llvm.emit_assembly,
                                        str(llvm.target_machine().target_data))
    assert llvm.target_features() == probed <= target_cpu.host_features()
    assert llvm.target().cpu == llvm.llvm.get_host_cpu_name()


def test_the_cache_key_covers_the_target(target):
    keys = set()
    for cpu, features in [("host", ""), ("haswell", ""), ("haswell", "-fma"), ("x86-64", "")]:
        target(cpu, features)
        keys.add(llvm.fingerprint())
    assert len(keys) == 4


# ------------------------------------------------------------- results


def programs():
    """(name, function, arguments, oracle): the kernels that choose by CPU, and the
    transformations around them."""
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((96, 80)), rng.standard_normal((80, 70))
    x = np.linspace(0.5, 3.0, 301)
    lanes = np.exp(rng.uniform(-5, 10, 70))
    return [
        ("math", lambda x: rnp.sin(x) * rnp.exp(-x) + rnp.cbrt(x), (x,),
         np.sin(x) * np.exp(-x) + np.cbrt(x)),
        ("gemm", lambda a, b: a @ b, (a, b), a @ b),
        ("few outputs", lambda a, b: a.T @ b, (a[:, :5], a[:, 5:10]), a[:, :5].T @ a[:, 5:10]),
        ("lane blocks", rune.vmap(newton), (lanes,), np.sqrt(lanes)),
        ("grad of lanes", rune.grad(lambda a: rnp.sum(rune.vmap(newton)(a))), (lanes,),
         0.5 / np.sqrt(lanes)),
        ("scan", lambda x: rune.scan(lambda c, v: (c * 0.5 + rnp.tanh(v), c), 0.0, x)[1], (x,),
         None),
    ]


def scan_oracle(x):
    c, out = 0.0, []
    for v in x:
        out.append(c)
        c = c * 0.5 + np.tanh(v)
    return np.array(out)


@pytest.mark.parametrize("cpu", ["haswell", "x86-64"])
def test_results_agree_under_another_target(target, cpu):
    target(cpu)
    for name, f, args, oracle in programs():
        oracle = scan_oracle(*args) if oracle is None else oracle
        eager, jitted = f(*args), rune.jit(f)(*args)
        np.testing.assert_allclose(eager, oracle, rtol=1e-10, atol=1e-12, err_msg=name)
        np.testing.assert_allclose(jitted, oracle, rtol=1e-10, atol=1e-12, err_msg=name)


def test_kernels_apart_are_the_targets_own(target):
    """Regression: the sin kernels compiled apart (runtime/math_kernels.py) were kept by
    name alone, so after an x86-64 (SSE) program a host program called the SSE build of
    float32's sin of 4 float64 lanes, which takes its argument in two xmm registers where
    the host's caller passed one ymm: lanes 2 and 3 of a 4-float carry came out 0."""
    rows = np.random.default_rng(2).uniform(-4, 4, (50, 4)).astype(np.float32)
    previous = np.concatenate([rows[:1], rows[:-1]])
    for cpu in ("x86-64", "haswell", "host"):
        target(cpu)
        for fn, want in ((rnp.sin, np.sin(previous)),  # and power's two arguments
                         (lambda c: rnp.power(c * c, c), (previous ** 2) ** previous)):
            f = rune.jit(lambda xs: rune.scan(lambda c, x: (x, fn(c)), xs[0], xs)[1])
            np.testing.assert_allclose(f(rows), want, rtol=3e-7, err_msg=cpu)


def test_gradients_under_another_target(target):
    target("haswell")
    rune.check_grads(lambda x: rnp.sum(rnp.tanh(x) * rnp.exp(x)), np.linspace(-1, 1, 9))
    x = np.linspace(0.1, 2, 33)
    jvp = rune.jit(lambda x, v: rune.jvp(rnp.sin, (x,), (v,))[1])(x, np.ones_like(x))
    np.testing.assert_allclose(jvp, np.cos(x), rtol=1e-12)


# ------------------------------------------------------------- code this machine cannot run


def test_code_for_features_the_host_lacks_is_refused_before_it_runs(target, forged_host):
    forged_host(target_cpu.host_features() - AVX512)  # a Zen 1, say: AVX2 and FMA
    target("skylake-avx512")
    f = rune.jit(lambda x: rnp.sin(x) + 1.0)
    x = np.linspace(0, 1, 64)
    assert "zmm" in rune.jit(rune.vmap(newton)).lower(x + 1).asm  # reading code is fine
    with pytest.raises(ValueError) as err:
        f(x)
    message = str(err.value)
    assert "RUNE_JIT_CPU='skylake-avx512'" in message and "avx512f" in message
    assert "host" in message
    target("skylake-avx512", "-avx512f")  # the same CPU less what this one lacks
    np.testing.assert_allclose(rune.jit(lambda x: rnp.sin(x) + 1.0)(x), np.sin(x) + 1.0,
                               rtol=1e-14)


def test_host_with_a_feature_the_host_lacks_is_refused(target, forged_host):
    forged_host(target_cpu.host_features() - AVX512)
    target("host", "+avx512f")
    with pytest.raises(ValueError, match="RUNE_JIT_CPU='.*' .*avx512f"):
        rune.jit(lambda x: x * 3.0)(np.ones(5))


def test_an_entry_needing_more_features_than_the_host_is_recompiled(
        target, forged_host, monkeypatch, tmp_path):
    """This machine stores an entry; one with fewer features (no AVX-512, or no AVX if
    this one has none) whose key agrees (the key covers the target already: here it is
    pinned to one value) compiles anew."""
    monkeypatch.setenv("RUNE_JIT_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(llvm, "fingerprint", lru_cache()(lambda: "one machine for both"))

    def run_afresh():
        monkeypatch.setattr(runtime, "_cache", weakref.WeakValueDictionary())
        monkeypatch.setattr(runtime, "_recent", OrderedDict())
        before = dict(counts)
        x = np.linspace(1.0, 4.0, 200)
        out = rune.jit(rune.vmap(newton))(x)
        np.testing.assert_allclose(out, np.sqrt(x), rtol=1e-11)
        return counts["compiled"] - before["compiled"], counts["loaded"] - before["loaded"]

    real = target_cpu.host_features()
    poorer = real - (AVX512 if host_has_avx512() else {"avx", "avx2", "fma", "f16c"})
    target("host")
    assert llvm.target_features() - poorer  # code that needs what the poorer one lacks
    assert run_afresh() == (1, 0)
    assert run_afresh() == (0, 1)  # the entry loads where its features are
    forged_host(poorer)
    assert run_afresh() == (1, 0)  # not loaded here: compiled for this CPU
    assert run_afresh() == (0, 1)  # and that entry is loaded


def test_a_saved_program_needing_features_the_host_lacks_is_not_loaded(
        target, forged_host, monkeypatch):
    from rune_jit._src.trace import trace_flat, type_of_value

    target("host")
    x = np.linspace(0.0, 1.0, 9)
    region = trace_flat(lambda x: [rnp.cos(x) * 3.0], [type_of_value(x)])
    record, obj, constants = runtime.prepare(region).record()
    needs = record["code"]["target"]["requires"]
    assert needs  # this machine's code uses some feature beyond x86-64's

    def load():
        monkeypatch.setattr(runtime, "_cache", weakref.WeakValueDictionary())
        monkeypatch.setattr(runtime, "_recent", OrderedDict())
        return runtime.load(record, obj, constants)

    np.testing.assert_allclose(load().run([x])[0], np.cos(x) * 3.0, rtol=1e-15)
    forged_host(target_cpu.host_features() - {needs[-1]})
    assert load() is None


def test_the_stamp_of_an_entry(target, forged_host):
    target("haswell")
    stamp = llvm.stamped({"symbol": "f"})
    assert stamp["symbol"] == "f" and stamp["target"]["cpu"] == "haswell"
    assert set(stamp["target"]["requires"]) == X86_64_V3
    forged_host(X86_64_V3)
    assert llvm.runs_here(stamp)
    forged_host(X86_64_V3 - {"fma"})
    assert not llvm.runs_here(stamp)
    assert not llvm.runs_here({"symbol": "f"})  # an entry that names nothing: no
    assert not llvm.runs_here({"target": {"requires": "avx2"}})


# ------------------------------------------------------------- bad settings


@pytest.mark.parametrize("cpu, features, setting, wrong", [
    ("skylake-avx513", "", "RUNE_JIT_CPU='skylake-avx513'", "not a CPU LLVM knows"),
    ("haswell", "+avx2,+avx1024", "RUNE_JIT_CPU_FEATURES='+avx2,+avx1024'", "'+avx1024'"),
    ("haswell", "avx2", "RUNE_JIT_CPU_FEATURES='avx2'", "not +name or -name"),
    ("host", "+nosuch", "RUNE_JIT_CPU_FEATURES='+nosuch'", "'+nosuch'"),
    ("i686", "", "RUNE_JIT_CPU='i686'", "32-bit"),
])
def test_bad_settings_are_named(target, cpu, features, setting, wrong):
    target(cpu, features)
    with pytest.raises(ValueError) as err:
        llvm.target_machine()
    message = str(err.value)
    assert setting in message and wrong in message
    if "32-bit" not in wrong:
        assert "llc -mcpu=help" in message


def test_an_unknown_cpu_fails_at_the_first_call_not_with_a_crash(tmp_path):
    script = textwrap.dedent("""
        import numpy as np, rune_jit as rune
        try:
            rune.jit(lambda x: x + 1)(np.ones(3))
        except ValueError as e:
            print("ValueError:", e)
    """)
    env = dict(os.environ, RUNE_JIT_CPU="zen9", RUNE_JIT_CACHE_DIR=str(tmp_path))
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "ValueError: RUNE_JIT_CPU='zen9' is not a CPU LLVM knows" in done.stdout
    assert "not a recognized processor" not in done.stderr  # LLVM's own line held back


def test_numpys_own_error_for_a_feature_it_cannot_disable_is_unchanged(tmp_path):
    """NPY_DISABLE_CPU_FEATURES is NumPy's: rune_jit neither reads nor rewords it."""
    from numpy._core._multiarray_umath import __cpu_baseline__

    if not __cpu_baseline__:
        pytest.skip("this NumPy has no baseline features to name")
    env = dict(os.environ, NPY_DISABLE_CPU_FEATURES=__cpu_baseline__[-1],
               RUNE_JIT_CACHE_DIR=str(tmp_path))
    done = subprocess.run([sys.executable, "-c", "import rune_jit"], env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode != 0
    assert "You cannot disable CPU feature" in done.stderr  # NumPy's words
    assert __cpu_baseline__[-1] in done.stderr and "rune_jit" not in done.stderr.splitlines()[-1]


def test_float16_without_f16c(target):
    """Without F16C, LLVM converts float16 by calling libgcc's __extendhfsf2 and
    __truncsfhf2: code for such a CPU must find them."""
    target("x86-64-v2")
    assert "f16c" not in llvm.target_features()
    x = np.linspace(-3, 3, 50).astype(np.float16)
    f = lambda x: rnp.sin(x) * x + 1  # noqa: E731
    np.testing.assert_allclose(rune.jit(f)(x), f(x), rtol=2e-3, atol=2e-3)
    np.testing.assert_allclose(rune.jit(f)(x).astype(np.float64),
                               np.sin(x.astype(np.float32)) * x + 1, rtol=2e-3, atol=2e-3)
