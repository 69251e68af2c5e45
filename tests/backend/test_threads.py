"""Compiled code on the pool of native threads (backend/cpu/runtime/threads.py): the lane blocks of a
vmapped iterate and of its reverse mode's counted scans run on every thread, with results
bit-identical to one thread's; concurrent calls, fork, Ctrl-C and bad settings."""

import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import rune_jit as rune
import rune_jit.numpy as rnp
from rune_jit._src import config
from rune_jit._src.backend.cpu.runtime import threads
from interrupts import sigint_as_from_a_terminal

N = 8192 + 17  # full blocks, and lanes past the last one
pytestmark = pytest.mark.skipif(config.num_threads < 2,
                                reason="RUNE_JIT_NUM_THREADS=1: compiled code stays serial")


def newton(a, max_steps=200):
    return rune.iterate(lambda x: (x + a / x) / 2, a,
                        until=lambda x: rnp.abs(x * x - a) <= 1e-12 * a, max_steps=max_steps)


def counted(a):
    """Newton's iterate with its step count (the until test counts too)."""
    x, n = rune.iterate(lambda c: ((c[0] + a / c[0]) / 2, c[1] + 1), (a, np.int64(0)),
                        until=lambda c: rnp.abs(c[0] * c[0] - a) <= 1e-12 * a,
                        max_steps=2000)
    return x, n


def lanes(n=N, stragglers=0, seed=0):
    a = np.exp(np.random.default_rng(seed).uniform(np.log(1e-6), np.log(1e12), n))
    if stragglers:
        a[::n // stragglers] = 1e300  # about 1000 steps each
    return a


def one_and_all(f, *args):
    """f's results on one thread and on all of them, and the regions run on several."""
    with threads.limit(1):
        alone = f(*args)
    before = threads.regions()
    shared = f(*args)
    return alone, shared, threads.regions() - before


def assert_identical(alone, shared):
    for x, y in zip(np.atleast_1d(alone) if not isinstance(alone, tuple) else alone,
                    np.atleast_1d(shared) if not isinstance(shared, tuple) else shared):
        assert x.dtype == y.dtype and np.array_equal(x, y, equal_nan=True)


def test_a_vmapped_iterate_runs_on_the_pool_with_the_same_bits():
    f = rune.jit(rune.vmap(counted))
    alone, shared, regions = one_and_all(f, lanes())
    assert regions >= 1  # a region for each pass of lane compaction
    assert_identical(alone, shared)
    assert shared[1].min() >= 1 and np.allclose(shared[0] ** 2, lanes(), rtol=1e-11)


def test_stragglers_and_the_gradient_keep_their_bits():
    f = rune.jit(rune.vmap(counted))
    alone, shared, regions = one_and_all(f, lanes(stragglers=40))
    assert regions >= 1 and shared[1].max() > 500
    assert_identical(alone, shared)
    g = rune.jit(rune.grad(lambda a: rnp.sum(rune.vmap(newton)(a))))
    a = lanes(seed=1)
    alone, shared, regions = one_and_all(g, a)
    assert regions == 2  # the forward iterate, and the counted scan of its transpose
    assert_identical(alone, shared)
    np.testing.assert_allclose(shared, 0.5 / np.sqrt(a), rtol=1e-6)


def vector_lane(a, max_steps=200):
    """A lane whose state is a 2-vector: no lane blocks; its lanes run one at a time."""
    def step(s):
        return s * 0.5 + rnp.stack([a, a * s[0] * 0.1])
    return rune.iterate(step, rnp.stack([a, -a]), max_steps=max_steps,
                        until=lambda s: rnp.max(rnp.abs(step(s) - s)) < 1e-9 * (1 + a))


def test_lanes_run_one_at_a_time_share_the_pool_too():
    a = np.random.default_rng(0).uniform(0.1, 2.0, 5003)
    alone, shared, regions = one_and_all(rune.jit(rune.vmap(vector_lane)), a)
    assert regions == 1
    assert_identical(alone, shared)
    g = rune.jit(rune.grad(lambda a: rnp.sum(rune.vmap(vector_lane)(a))))
    alone, shared, regions = one_and_all(g, a)
    assert regions == 2
    assert_identical(alone, shared)
    a[[4000, 70]] = np.nan  # these never converge
    with pytest.raises(rune.IterateError, match=r"in lane 70\n"):
        rune.jit(rune.vmap(lambda a: vector_lane(a, max_steps=60)))(a)


def test_lanes_that_call_python_stay_on_the_calling_thread(capsys):
    def lane(a):
        def step(s):
            rune.debug.print("step {}", s[0] * 0.0)
            return s * 0.5 + rnp.stack([a, a])
        return rune.iterate(step, rnp.stack([a, a]), max_steps=1,
                            until=lambda s: s[0] > 1e300)
    before = threads.regions()
    with pytest.raises(rune.IterateError, match=r"in lane 0\n"):
        rune.jit(rune.vmap(lane))(np.ones(8192))
    assert threads.regions() == before and capsys.readouterr().out == "step 0.0\n"


def test_a_small_batch_stays_on_the_calling_thread():
    before = threads.regions()
    rune.jit(rune.vmap(newton))(lanes(256))
    assert threads.regions() == before


@pytest.mark.parametrize("bad", [[40], [N - 30, 40], [N - 5, N - 30], [1040, 1000]],
                         ids=["early", "late-and-early", "tail-and-late", "one-claim"])
def test_iterate_error_names_the_first_lane_whatever_thread_ran_it(bad):
    a = lanes()
    a[bad] = 1e300  # these take ~1000 steps: more than 100
    f = rune.jit(rune.vmap(lambda a: newton(a, max_steps=100)))
    for limit in (1, 2):
        with threads.limit(limit), pytest.raises(rune.IterateError,
                                                 match=rf"in lane {min(bad)}\n"):
            f(a)


def run_script(script: str, timeout: float = 120, **env) -> subprocess.CompletedProcess:
    """`script` in a fresh interpreter (a deadlock fails at the timeout, not hangs)."""
    return subprocess.run([sys.executable, "-c", textwrap.dedent(script)], timeout=timeout,
                          capture_output=True, text=True, env={**os.environ, **env},
                          preexec_fn=sigint_as_from_a_terminal)


def test_concurrent_calls_from_python_threads():
    out = run_script("""
        from concurrent.futures import ThreadPoolExecutor
        import numpy as np, rune_jit as rune, rune_jit.numpy as rnp
        from rune_jit._src.backend.cpu.runtime import threads

        def newton(a):
            return rune.iterate(lambda x: (x + a / x) / 2, a,
                                until=lambda x: rnp.abs(x * x - a) <= 1e-12 * a,
                                max_steps=200)
        f = rune.jit(rune.vmap(newton))
        inputs = [np.exp(np.random.default_rng(i).uniform(-13, 27, 8192 + i)) for i in range(8)]
        with threads.limit(1):
            want = [f(a) for a in inputs]
        with ThreadPoolExecutor(4) as pool:
            for _ in range(5):
                got = list(pool.map(f, inputs))
                assert all(np.array_equal(g, w) for g, w in zip(got, want))
        print("ok", threads.regions() > 0)
    """)
    assert out.stdout == "ok True\n", out.stderr[-2000:]


def test_a_forked_child_restarts_the_pool():
    f = rune.jit(rune.vmap(newton))
    a = lanes()
    want = f(a)  # the pool has run here
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: its region must start workers of its own
        try:
            before = threads.regions()
            ok = np.array_equal(f(a), want) and threads.regions() > before
            os.write(write, b"1" if ok else b"0")
        finally:
            os._exit(0)
    os.close(write)
    deadline = time.monotonic() + 60
    while os.waitpid(pid, os.WNOHANG) == (0, 0):
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            pytest.fail("the forked child hung")
        time.sleep(0.01)
    assert os.read(read, 1) == b"1"
    os.close(read)


def test_ctrl_c_stops_a_parallel_region():
    out = run_script("""
        import os, signal, threading
        import numpy as np, rune_jit as rune, rune_jit.numpy as rnp
        from rune_jit._src.backend.cpu.runtime import threads

        def arm():
            threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT)).start()
        step = lambda c: (c[0] + 1, rnp.sin(c[1]))
        f = rune.jit(lambda x: (rune.debug.callback(arm), rune.vmap(lambda a: rune.iterate(
            step, (np.int64(0), a), until=lambda c: c[0] < 0, max_steps=10**15)[1])(x))[1])
        try:
            f(np.linspace(0.0, 1.0, 8192))
        except KeyboardInterrupt:
            print("interrupted", threads.regions())
    """, RUNE_JIT_CACHE="0")
    assert out.stdout == "interrupted 1\n", out.stderr[-2000:]


@pytest.mark.parametrize("value", ["0", "-1", "abc", "2.5"])
def test_bad_num_threads_is_a_clear_error(monkeypatch, value):
    monkeypatch.setenv("RUNE_JIT_NUM_THREADS", value)
    with pytest.raises(ValueError, match=f"RUNE_JIT_NUM_THREADS must be a positive integer, "
                                         f"got '{value}'"):
        config._num_threads()


def test_bad_num_threads_fails_at_import():
    out = run_script("import rune_jit", RUNE_JIT_NUM_THREADS="0")
    assert out.returncode != 0 and "RUNE_JIT_NUM_THREADS" in out.stderr


def test_one_thread_compiles_serial_code():
    out = run_script("""
        import numpy as np, rune_jit as rune, rune_jit.numpy as rnp
        f = rune.vmap(lambda a: rune.iterate(lambda x: (x + a / x) / 2, a,
                      until=lambda x: rnp.abs(x * x - a) <= 1e-12 * a, max_steps=200))
        print("rune.parallel_for" in rune.jit(f).lower(np.ones(8192)).llvm_ir)
    """, RUNE_JIT_NUM_THREADS="1")
    assert out.stdout == "False\n", out.stderr[-2000:]
    assert "rune.parallel_for" in rune.jit(rune.vmap(newton)).lower(np.ones(8192)).llvm_ir


MAPS = {
    "odd 1-d length, math functions": (lambda x: rnp.sin(x) * 2.0 + rnp.exp(-x), (100_003,)),
    "rows wider than a block": (lambda x: rnp.tanh(x) + rnp.sin(x.T).T, (37, 20_011)),
    "narrow rows": (lambda x: rnp.sin(x) * x, (50_001, 3)),
    "a broadcast": (lambda x: rnp.sin(x[:, :1] * np.arange(5.0)), (40_001, 2)),
    "sums of rows": (lambda x: rnp.sum(rnp.sin(x), axis=-1), (50_001, 7)),
    "maxima of long rows": (lambda x: rnp.max(x * 2.0, axis=1), (300, 2001)),
    "a sum of every element": (lambda x: rnp.sum(rnp.tanh(x)), (300_007,)),
    "a mean of a matrix": (lambda x: rnp.mean(rnp.sin(x)), (1001, 513)),
    "a maximum of every element": (lambda x: rnp.max(rnp.exp(x)), (2, 200_003)),
}


@pytest.mark.parametrize("name", list(MAPS))
def test_large_maps_run_on_the_pool_with_the_same_bits(name):
    fn, shape = MAPS[name]
    x = np.random.default_rng(0).normal(size=shape)
    alone, shared, regions = one_and_all(rune.jit(fn), x)
    assert regions == 1
    assert_identical(alone, shared)
    np.testing.assert_allclose(shared, fn(x), rtol=1e-12, atol=1e-15)


def test_small_maps_stay_on_the_calling_thread():
    before = threads.regions()
    rune.jit(lambda x: rnp.sin(x) + 1.0)(np.ones(1000))
    rune.jit(lambda x: rnp.sum(rnp.sin(x)))(np.ones(100_000))  # a small sum
    rune.jit(lambda x: rune.scan(lambda c, _: (rnp.sin(c) + 1.0, None), x, length=3)[0])(
        np.ones(10_000))
    assert threads.regions() == before


def test_large_maps_in_a_loop_step_run_on_the_pool_each_step_with_the_same_bits():
    def f(x):
        return rune.scan(lambda c, _: (rnp.sin(c) * 2.0 + rnp.exp(-c), rnp.sum(c)), x,
                         length=3)
    x = np.random.default_rng(2).normal(size=100_003)
    alone, shared, regions = one_and_all(rune.jit(f), x)
    assert regions == 3  # each step's map (its sum is too small a fold to split)
    assert_identical(alone, shared)
    c, sums = x, []
    for _ in range(3):
        sums.append(np.sum(c))
        c = np.sin(c) * 2.0 + np.exp(-c)
    np.testing.assert_allclose(shared[0], c, rtol=1e-12)
    np.testing.assert_allclose(shared[1], sums, rtol=1e-9)


def test_a_vmapped_scan_runs_its_lanes_on_the_pool_each_step_with_the_same_bits():
    """A vmapped scan's step is one map over the lanes: each step, a region of its own."""
    def f(a):
        return rune.scan(lambda c, _: (rnp.sin(c) * a + rnp.cos(c * 0.5) * 0.1, c), a,
                         length=5)
    a = np.random.default_rng(6).uniform(0, 1, 40_001)
    alone, shared, regions = one_and_all(rune.jit(rune.vmap(f)), a)
    assert regions == 5
    assert_identical(alone, shared)
    c = a
    for _ in range(5):
        c = np.sin(c) * a + np.cos(c * 0.5) * 0.1
    np.testing.assert_allclose(shared[0], c, rtol=1e-12)


def scattered(op, n_out=1000, n=100_003, dtype=np.float64, seed=3):
    """An output, ids (some past either end) and updates for a large scatter."""
    rng = np.random.default_rng(seed)
    ids = rng.integers(-n_out - 50, n_out + 50, n)
    if dtype == np.float64:
        return rng.normal(size=n_out), ids, rng.normal(size=n)
    return (rng.integers(-9, 9, n_out).astype(dtype), ids,
            rng.integers(-3, 4, n).astype(dtype) if op != "multiply" else
            rng.choice(np.array([-1, 1, 1, 1], dtype), n))


def numpy_scatter(op, x, ids, u):
    inside = (ids >= -x.size) & (ids < x.size)
    out = x.copy()
    getattr(np, op if op not in ("min", "max") else op + "imum").at(out, ids[inside],
                                                                      u[inside])
    return out


@pytest.mark.parametrize("dtype", [np.float64, np.int64, np.int32])
@pytest.mark.parametrize("op", ["add", "multiply", "min", "max"])
def test_a_large_scatter_runs_in_parts_with_the_same_bits(op, dtype):
    """Updates ten times the output's size: split in parts, each into its own copy of the
    output, combined in order; the same parts on one thread as on several."""
    x, ids, u = scattered(op, dtype=dtype)
    f = rune.jit(lambda x, ids, u: getattr(x.at[ids], op)(u, mode="drop"))
    alone, shared, regions = one_and_all(f, x, ids, u)
    assert regions == 1
    assert_identical(alone, shared)
    want = numpy_scatter(op, x, ids, u)
    if dtype == np.float64 and op in ("add", "multiply"):
        np.testing.assert_allclose(shared, want, rtol=1e-11, atol=1e-12)
    else:
        assert np.array_equal(shared, want)


def test_a_scatter_in_parts_keeps_negative_zeros_it_does_not_touch():
    x = np.full(1000, -0.0)
    ids = np.random.default_rng(4).integers(0, 500, 100_003) * 2  # even positions only
    out = rune.jit(lambda x, ids, u: x.at[ids].add(u))(x, ids, np.ones(ids.size))
    assert np.signbit(out[1::2]).all()
    assert np.array_equal(out[::2], np.bincount(ids // 2, minlength=500).astype(float))


def test_a_scatter_in_parts_names_the_first_index_out_of_bounds():
    x, ids, u = scattered("add")
    ids = ids % 1000
    ids[70_000], ids[90_000] = 1234, 5678  # in different parts; the first is named
    f = rune.jit(lambda x, ids, u: x.at[ids].add(u))
    with pytest.raises(IndexError, match="1234"):
        f(x, ids, u)


def test_a_sparse_product_in_a_scan_step_scatters_in_parts_each_step():
    """The W8 bench's loop: x' = tanh(A x + b), A x = segment_sum(vals * x[cols], rows)."""
    rng = np.random.default_rng(5)
    n, nnz, steps = 2000, 60_000, 4
    rows, cols = rng.integers(0, n, nnz), rng.integers(0, n, nnz)
    vals, b = rng.normal(0, 0.1, nnz), rng.normal(size=n)

    def f(vals, x):
        step = lambda x, _: (rnp.tanh(rune.ops.segment_sum(vals * x[cols], rows, n) + b),
                             None)
        return rune.scan(step, x, length=steps)[0]

    x0 = rng.normal(size=n)
    alone, shared, regions = one_and_all(rune.jit(f), vals, x0)
    assert regions == steps
    assert_identical(alone, shared)
    x = x0
    for _ in range(steps):
        x = np.tanh(np.bincount(rows, vals * x[cols], minlength=n) + b)
    np.testing.assert_allclose(shared, x, rtol=1e-12, atol=1e-14)
    assert_identical(f(vals, x0), shared)  # eager: the scan compiled as a unit, the same code
    g = rune.jit(rune.grad(lambda vals, x: rnp.sum(f(vals, x))))
    alone, shared, regions = one_and_all(g, vals, x0)
    assert regions >= 2 * steps  # the forward scatter and the backward one, each step
    assert_identical(alone, shared)
    rune.check_grads(lambda v: f(v, x0), vals)  # jvp and vjp


def test_a_sum_split_in_blocks_rounds_alike_on_one_thread():
    """A large reduction to a scalar folds the same blocks with or without threads (and
    in a loop step, which stays on one thread): one rounding for every setting."""
    script = """
        import numpy as np, rune_jit as rune, rune_jit.numpy as rnp
        x = np.random.default_rng(1).normal(size=1_000_003)
        print(repr(float(rune.jit(lambda x: rnp.sum(rnp.sin(x) * x))(x))))
    """
    one = run_script(script, RUNE_JIT_NUM_THREADS="1")
    two = run_script(script, RUNE_JIT_NUM_THREADS="2")
    assert one.returncode == two.returncode == 0, one.stderr[-2000:] + two.stderr[-2000:]
    x = np.random.default_rng(1).normal(size=1_000_003)
    in_scan = rune.jit(lambda x: rune.scan(lambda c, _: (c + rnp.sum(rnp.sin(x) * x), None),
                                           0.0, length=1)[0])(x)
    assert one.stdout == two.stdout == f"{float(in_scan)!r}\n"
    np.testing.assert_allclose(float(in_scan), np.sum(np.sin(x) * x), rtol=1e-12)


def test_the_default_is_the_cpus_this_process_may_use(monkeypatch):
    monkeypatch.delenv("RUNE_JIT_NUM_THREADS", raising=False)
    assert config._num_threads() == len(os.sched_getaffinity(0))
    with pytest.raises(ValueError, match="n >= 1"), threads.limit(0):
        pass
