"""Reductions over a short last axis and the values they broadcast back along it (issue
41's log_softmax over rows of 5): the row loops run across rows in vectors, a row's
value is read once a row (no gather at flat index // k) and a broadcast stores the
arithmetic it repeats. Values as NumPy's (NaN, -0/+0, inf, keepdims, argmax ties), in
every dtype, jitted against the NumPy interpreter, under grad and vmap, in a scan's step;
and the compiled code of a step."""

import re

import numpy as np
import pytest

import rune_jit as rune
import rune_jit.numpy as rnp
from rune_jit import config
from machine_code import _X86

# rows of 37: no multiple of a vector's lanes, so a remainder loop runs too
ROWS = 37


def _rows(k: int, dtype) -> np.ndarray:
    """(ROWS, k) values with, in rows of their own: a NaN, -0 beside +0, -inf, +inf, a
    tie for the largest, and a row all -0."""
    x = np.random.default_rng(k).normal(0, 3, (ROWS, k)).astype(dtype)
    if np.dtype(dtype).kind == "f":
        x[1, k // 2] = np.nan
        x[2, :] = -1.0
        x[2, 0], x[2, -1] = -0.0, 0.0
        x[3, 0] = -np.inf
        x[4, -1] = np.inf
        x[6, :] = -0.0
    x[5, 0] = x[5, -1] = x[5].max() + 1
    return x


def _reductions(x):
    """Each short-row reduction, and a row value broadcast back."""
    m = rnp.max(x, axis=-1, keepdims=True)
    return (m, rnp.min(x, axis=-1), rnp.sum(x, axis=-1), rnp.argmax(x, axis=-1),
            rnp.argmin(x, axis=-1), x - m, x * rnp.min(x, axis=-1, keepdims=True))


def _same(got, want) -> None:
    """Equal, NaN where NumPy's is (zeros of either sign: see the test)."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    if want.dtype.kind == "f":
        assert np.array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int32])
@pytest.mark.parametrize("k", [2, 4, 5])
def test_short_row_reductions_match_numpy(k, dtype, monkeypatch):
    x = _rows(k, dtype)
    got = rune.jit(_reductions)(x)
    monkeypatch.setattr(config, "backend", "interpret")
    want = _reductions(x)
    for i, (g, w) in enumerate(zip(got, want)):
        if i == 2 and np.dtype(dtype).kind == "f":  # the sum, in another order: ulps
            size = np.nanmax(np.where(np.isinf(x), 0, np.abs(x)).sum(-1))
            np.testing.assert_allclose(g, w, rtol=0, atol=8 * np.finfo(dtype).eps * size)
        else:
            _same(g, w)
    if np.dtype(dtype).kind == "f":  # +0 is larger than -0 (llvm.maximum's order; NumPy
        # gives either zero of a tie)
        mx, mn = np.asarray(got[0])[:, 0], np.asarray(got[1])
        assert not np.signbit(mx[2]) and np.signbit(mn[2]) and np.signbit(mx[6])
    # NumPy's own (the interpreter's oracle) for the max and the argmax
    np.testing.assert_array_equal(np.asarray(got[0])[:, 0], np.max(x, axis=-1))
    np.testing.assert_array_equal(np.asarray(got[3]), np.argmax(x, axis=-1))


def _log_softmax_numpy(z):
    m = np.max(z, axis=-1, keepdims=True)
    s = z - np.where(np.isfinite(m), m, 0.0)
    return s - np.log(np.sum(np.exp(s), axis=-1, keepdims=True))


@pytest.mark.slow
def test_log_softmax_scan_grad_and_vmap():
    """LSM's step in a scan (mixed float32 input promoted by the float64 z0), its
    gradient, and vmap of a row at a time."""
    z0 = np.random.default_rng(1).normal(0, 3, (ROWS, 5))
    z0[1, 2] = np.nan  # a NaN row stays NaN, the other rows are untouched

    def run(z0, steps=30):
        return rune.scan(lambda z, _: (rune.nn.log_softmax(z, axis=-1) + z0, None), z0,
                         None, length=steps)[0]

    want = z0
    for _ in range(30):
        want = _log_softmax_numpy(want) + z0
    got = rune.jit(run)(z0)
    assert np.array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    got32 = rune.jit(lambda z: run(z.astype(np.float32) + z0 * 0))(z0)
    np.testing.assert_allclose(got32, want, rtol=1e-5, atol=1e-5)
    rows = rune.jit(rune.vmap(lambda r: rune.nn.log_softmax(r)))(z0)
    np.testing.assert_allclose(rows, _log_softmax_numpy(z0), rtol=1e-14, atol=1e-14)

    finite, w = z0[2:9], np.random.default_rng(2).normal(size=(7, 5))
    rune.check_grads(lambda z: rnp.sum(run(z, 4) * w), finite, eps=1e-6, rtol=1e-5)
    g = rune.jit(rune.grad(lambda z: rnp.sum(rune.nn.log_softmax(z) * w)))(finite)
    s = np.exp(_log_softmax_numpy(finite))
    np.testing.assert_allclose(g, w - s * w.sum(-1, keepdims=True), rtol=1e-13, atol=1e-14)


def test_row_broadcast_reads_once_a_row():
    """x - max(x) over rows of 5 in a scan's step: one loop over the rows (no quotient of
    a flat index by 5, no gather), the max across rows in vectors; log(sum) once a row."""
    def run(z0):
        def step(z, _):
            return z - rnp.max(z, axis=-1, keepdims=True) * 0.5 + z0, None
        return rune.scan(step, z0, None, length=3)[0]

    z0 = np.random.default_rng(3).normal(size=(300, 5))
    lowered = rune.jit(run).lower(z0)
    assert not re.search(r"udiv i64 %\S+, 5\b", lowered.llvm_ir)
    if _X86:
        assert "gather" not in lowered.asm
        assert re.search(r"\bvmaxpd\s+%[yz]mm", lowered.asm)
    # log_softmax: the log is called in a loop over the 300 rows, not the 1500 elements
    ir = rune.jit(rune.nn.log_softmax).lower(z0).llvm_ir
    calls = [m.start() for m in re.finditer(r"call double @\"?(rune_log_f64|log)\b", ir)]
    assert calls
    for at in calls:  # the bound of the loop around the call: the last one before it
        bounds = re.findall(r'icmp slt i64 %"[.\d]+", (\d+)', ir[:at])
        assert bounds[-1] == "300"
