"""Large results: the pool recycles dropped results' memory, and fresh memory is faulted
in on a helper thread without changing what the program writes."""

import gc

import numpy as np

import rune_jit as rune
from rune_jit._src.backend.cpu.runtime import pool

N = (1 << 20) // 8 * 3  # 3 MiB of float64: a pooled result


def test_large_results_are_right_and_distinct():
    f = rune.jit(lambda x: x * 2.0 + 1.0)
    x = np.arange(N, dtype=np.float64)
    a, b = f(x), f(x + 1.0)
    np.testing.assert_array_equal(a, x * 2.0 + 1.0)
    np.testing.assert_array_equal(b, x * 2.0 + 3.0)
    assert not np.shares_memory(a, b)
    a[0] = -1.0  # a result is the caller's: writing it changes nothing else
    np.testing.assert_array_equal(f(x)[:2], [1.0, 3.0])


def test_a_dropped_result_lends_its_memory_to_the_next():
    f = rune.jit(lambda x: x + 1.0)
    x = np.zeros(N)
    first = f(x)
    address = first.ctypes.data
    del first
    gc.collect()
    second = f(x + 1.0)
    assert second.ctypes.data == address
    np.testing.assert_array_equal(second, np.full(N, 2.0))
    view = second[10:20]  # a view keeps the memory: the next result gets other memory
    del second
    third = f(x)
    assert not np.shares_memory(view, third) and view[0] == 2.0


def test_fresh_memory_starts_on_a_huge_page():
    raw, address = pool._fresh(3 << 20)
    start = raw.ctypes.data
    assert address % pool.HUGE_PAGE == 0
    assert start <= address and address + (3 << 20) <= start + raw.nbytes


def test_faulting_in_keeps_what_is_written():
    """The helper thread may reach a page after the program wrote it."""
    n = 4 << 20
    raw, address = pool._fresh(n)
    block = np.asarray(raw[address - raw.ctypes.data:][:n])
    block[::4096] = 7
    block[-1] = 9
    if pool._madvise is not None:  # Linux: 0, or -1 where the kernel predates the advice
        assert pool._populate(pool._madvise, raw, address, n) in (0, -1)
    assert (block[::4096] == 7).all() and block[-1] == 9 and block.ctypes.data == address


def test_a_loaded_program_has_memory_on_its_way_for_its_first_result():
    from rune_jit._src.backend.cpu import runtime
    from rune_jit._src.ir import Type
    from rune_jit._src.trace import trace_flat

    n = N + 512  # a size no other test uses
    t = Type(np.dtype(np.float64), (n,))
    region = trace_flat(lambda x: [x * 3.0], [t])
    pool.POOL.free.pop(t.nbytes, None)
    executable = runtime.prepare(region)
    (raw, address), = pool.POOL.free[t.nbytes]
    out, = executable.run([np.ones(n)])
    assert out.ctypes.data == address and (out == 3.0).all()


def test_fresh_memory_without_a_helper_thread(monkeypatch):
    def refuse(*args):
        raise RuntimeError("can't start new thread")

    monkeypatch.setattr(pool._thread, "start_new_thread", refuse)
    raw, address = pool._fresh(3 << 20)
    assert address % pool.HUGE_PAGE == 0 and raw.nbytes >= 3 << 20
