"""RUNE_JIT_BACKEND=iree (issue 38, docs/mlir.md "IREE as a backend"): jitted programs and
loops called outside jit compiled by iree-compile and run by IREE's runtime, on the CPU
here (`local-task`), their results the native backend's and the interpreter's; what IREE
cannot run raises, naming the primitive and the user's line; IREE missing or a device it
cannot open are errors that say so. The loop corpus and the seed examples run whole in
the slow tests (an iree-compile costs about a second here), and random programs of
tests/programs.py with their gradients."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

import rune_jit as rune
import rune_jit.numpy as rnp
from rune_jit._src import backend, config
from paths import REPO
from programs import make_inputs, programs

pytest.importorskip("iree.compiler")
pytest.importorskip("iree.runtime")


@pytest.fixture
def iree(monkeypatch):
    """The IREE backend selected as RUNE_JIT_BACKEND=iree selects it."""
    monkeypatch.setattr(config, "backend", "iree")
    return backend.current()


def program(xs, counts, flags):
    """A scan, its gradient, a vmapped iterate (each lane stopping on its own), unsigned
    integers and booleans (a bool scalar result, or bool scalars stacked, were IREE's
    gaps: they are written by linalg.generic now): one program, one iree-compile."""
    def loss(xs):
        c, ys = rune.scan(lambda c, x: (rnp.sin(c) * x + 0.5, c * x), 0.3, xs)
        return c + rnp.sum(ys)
    halve = rune.vmap(lambda a: rune.iterate(lambda x: x * 0.5, a, until=lambda x: x < 1.0,
                                             max_steps=60))
    return (loss(xs), rune.grad(loss)(xs), halve(xs * 10.0), (counts * 3) // 2,
            flags & (xs > 0.5), rnp.stack([rnp.any(flags), rnp.all(flags)]),
            rnp.any(flags & (xs > 0.9)))  # a bool scalar, last


ARGS = (np.linspace(0.1, 1.0, 5), np.array([1, 7, 2**32 - 1, 0, 5], np.uint32),
        np.array([True, False, True, True, False]))


def test_a_jitted_program_runs_under_iree_as_natively_and_is_saved(iree, monkeypatch):
    jitted = rune.jit(program)
    got = jitted(*ARGS)
    monkeypatch.setattr(config, "backend", "native")
    want = rune.jit(program)(*ARGS)
    monkeypatch.setattr(config, "backend", "interpret")
    oracle = program(*ARGS)
    for g, w, o in zip(got, want, oracle):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=1e-12)
        np.testing.assert_allclose(g, o, rtol=1e-12)
    (executable,) = [p.executable for p in jitted.cache.values()]
    assert type(executable).__name__ == "IreeExecutable"
    # what a saved program keeps (RUNE_JIT_SAVE_TRACES), loaded again, runs the same
    meta, code, constants = executable.record()
    again = iree.load(meta, code, constants).run(list(ARGS))
    assert all(np.array_equal(a, g) for a, g in zip(again, got))
    monkeypatch.setattr(config, "backend", "iree")
    stages = jitted.lower(*ARGS)
    assert "scf.while" in stages.mlir and "scf.for" in stages.as_text()
    with pytest.raises(NotImplementedError, match="iree-compile makes the machine code"):
        stages.llvm_ir


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_powers_of_negative_bases_and_cs_special_values_are_numpys(iree, dtype):
    """MLIR's math.powf is only defined for positive bases (IREE computes exp(y log x)):
    (-2) ** 3 was NaN, (-0) ** -3 inf, 1 ** inf NaN, (-3) ** 0 NaN (regression; found by
    the ireetime helper). Finite values within IREE's powf's few ulps; NaNs, zeros'
    signs and infinities as NumPy's."""
    values = np.array([-np.inf, -3, -2, -1.5, -1, -0.5, -0.0, 0, 0.5, 1, 1.5, 2, 3, np.inf,
                       np.nan], dtype)
    x, y = (v.ravel() for v in np.meshgrid(values, values))
    got = rune.jit(lambda a, b: a ** b)(x, y)
    with np.errstate(all="ignore"):
        want = x ** y
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-13 if dtype == np.float64 else 1e-5)
    numbers = ~np.isnan(want)
    np.testing.assert_array_equal(np.signbit(got)[numbers], np.signbit(want)[numbers])


def test_a_primitive_iree_cannot_run_is_named_with_the_users_line(iree):
    def f(x):
        return rnp.linalg.cholesky(x) * 2.0
    with pytest.raises(NotImplementedError, match=r"cholesky has no MLIR form at .*"
                                                  rf"test_iree_backend.py:{f.__code__.co_firstlineno + 1}"):
        rune.jit(f)(np.eye(3))
    with pytest.raises(NotImplementedError, match="complex"):
        rune.jit(lambda z: z * z)(np.ones(2, np.complex128))


def test_a_device_iree_cannot_open_is_named():
    from rune_jit._src.backend.iree import IreeBackend

    with pytest.raises(RuntimeError, match=r"IREE cannot open the device 'cuda://99'.*"
                                           r"RUNE_JIT_IREE_DEVICE"):
        IreeBackend("cuda://99")
    with pytest.raises(ValueError, match=r"IREE device 'tpu'.*local-task, local-sync, cuda"):
        IreeBackend("tpu")


def test_iree_missing_is_an_import_error_naming_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "iree.runtime", None)
    with pytest.raises(ImportError, match=r"pip install 'rune-jit\[mlir\]'"):
        backend.get.__wrapped__("iree")
    with pytest.raises(ValueError, match=r"'native', 'interpret', 'iree', got 'gpu'"):
        backend.get.__wrapped__("gpu")


# ------------------------------------------------------------- slow: the corpora


@pytest.mark.slow
def test_loops_outside_jit_and_run_time_errors_under_iree(iree, monkeypatch):
    xs = np.linspace(0.1, 1.0, 4)
    compiled = []
    with monkeypatch.context() as m:
        m.setattr(iree, "compile", lambda r: compiled.append(r) or type(iree).compile(iree, r))
        c, ys = rune.scan(lambda c, x: (c * x + 1.0, c), 1.0, xs)  # a loop at the prompt
    assert len(compiled) == 1  # through IREE
    with _native():
        want_c, want_ys = rune.scan(lambda c, x: (c * x + 1.0, c), 1.0, xs)
    np.testing.assert_allclose(c, want_c, rtol=1e-14)
    np.testing.assert_allclose(ys, want_ys, rtol=1e-14)
    never = rune.jit(lambda a: rune.iterate(lambda x: x * 2.0, a, until=lambda x: x < 0.0,
                                            max_steps=3))
    with pytest.raises(rune.IterateError, match="max_steps = 3"):
        never(1.0)
    with pytest.raises(np.linalg.LinAlgError, match="singular"):
        rune.jit(rnp.linalg.solve)(np.zeros((2, 2)), np.ones(2))
    with pytest.raises(IndexError, match="out of bounds for axis 0 with size 3"):
        rune.jit(lambda x, i: rnp.take(x, i, mode="raise"))(np.ones(3), np.array([0, 7]))


@pytest.mark.slow
def test_what_iree_cannot_compile_is_named_with_the_users_line(iree):
    def f(x):
        return rune.scan(lambda c, r: (rnp.cosh(c) * 0.1 + r, c), 0.0, x)[0]  # a scalar cosh
    line = f.__code__.co_firstlineno + 1
    with pytest.raises(NotImplementedError, match=rf"IREE cannot compile this program for "
                                                  rf"'local-task' \(math functions(.|\n)*"
                                                  rf"test_iree_backend.py:{line}:0: error: .*math.cosh"):
        rune.jit(f)(np.ones(3))


class _backend:
    """config.backend set to `name` while in the block."""

    def __init__(self, name: str):
        self.name = name

    def __enter__(self):
        self.was, config.backend = config.backend, self.name

    def __exit__(self, *exc):
        config.backend = self.was


def _native() -> _backend:
    return _backend("native")


def _load_mlir_tests():
    import importlib.util

    spec = importlib.util.spec_from_file_location("mlir_tests_for_iree",
                                                  REPO / "tests/backend/test_mlir.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


LOOP_CORPUS = _load_mlir_tests().LOOP_CORPUS


def _runs_under_iree_as_natively(f, *args) -> None:
    """f's results under IREE equal the native code's, unless f meets one of IREE's known
    gaps (upstream.IREE_GAPS), which must say so."""
    with _native():
        want = rune.tree.leaves(rune.jit(f)(*args))
    with _backend("iree"):
        try:
            got = rune.tree.leaves(rune.jit(f)(*args))
        except NotImplementedError as e:
            assert "IREE cannot compile" in str(e), e
            return
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-9, atol=1e-12)


@pytest.mark.slow
@pytest.mark.xdist_group("iree backend loops")
# every fourth: test_mlir.py runs the whole corpus through IREE in batched modules (one
# iree-compile for many programs); through the backend each program is a compile of its own
@pytest.mark.parametrize("name", list(LOOP_CORPUS)[::4])
def test_the_loop_corpus_runs_under_iree_as_natively(name):
    _runs_under_iree_as_natively(*LOOP_CORPUS[name]())


@pytest.mark.slow
@settings(max_examples=6, deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
@given(prog=programs(min_ops=8, max_ops=15))
def test_random_programs_and_their_gradients_run_under_iree_as_natively(prog):
    """tests/programs.py's straight-line programs, each op's value and the gradient of
    their sum."""
    inputs = make_inputs(prog, 0)
    for f in (prog.values(rnp), rune.grad(prog.scalar(rnp), argnums=tuple(range(len(inputs))))):
        _runs_under_iree_as_natively(f, *inputs)


@pytest.mark.slow
def test_the_tour_prints_under_iree_what_it_prints_natively(monkeypatch):
    """The seed examples' first: each step of the tour prints the same under IREE, but
    those that call back from compiled code (a callback has no MLIR form: those steps
    raise NotImplementedError, and only those) and the lane an iterate's error names."""
    from rune_jit._src import tour

    native = [out for _, out in tour.run_steps()]
    monkeypatch.setattr(config, "backend", "iree")
    namespace: dict = {"__name__": "rune_jit_tour"}
    compared = 0
    for step, want in zip(tour.STEPS, native):
        out = _printed(step.code, namespace)
        if isinstance(out, NotImplementedError):
            assert "callback" in str(out) and "callback" in step.code, out
            continue
        # a lane that runs out of steps is not named in MLIR (docs/mlir.md, "Lanes")
        assert out == re.sub(r"in lane \d+", "in a lane of the map", want), (step.title, out)
        compared += 1
    assert compared == sum("callback" not in step.code for step in tour.STEPS)


def _printed(code: str, namespace: dict):
    import contextlib
    import io

    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            exec(compile(code, "<tour>", "exec"), namespace)
    except NotImplementedError as e:
        return e
    return out.getvalue()


@pytest.mark.slow
def test_gpu_check_runs_on_the_cpu():
    """tools/gpu_check's smoke test: on the CPU (local-task), a few programs of the loop
    corpus, its table printed."""
    done = subprocess.run([sys.executable, str(REPO / "tools" / "gpu_check"), "--device",
                           "local-task", "--limit", "3", "loops"], capture_output=True,
                          text=True, env=dict(os.environ, PYTHONPATH=str(REPO)), timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "| loops | 3 |" in done.stdout and "local-task" in done.stdout, done.stdout
