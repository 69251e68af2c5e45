"""The C reference: c_ref.c built with the system's cc into a temporary directory and
loaded with ctypes. Importing this module fails when there is no `cc` on PATH."""

from __future__ import annotations

import atexit
import ctypes
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np

import workloads as wl

CC = shutil.which("cc")
if CC is None:
    raise ImportError("no C compiler: `cc` is not on PATH")
SOURCE = Path(__file__).with_name("c_ref.c")
# bench/targets.py's avx2 target sets RUNE_BENCH_MARCH=haswell
FLAGS = ["-O3", f"-march={os.environ.get('RUNE_BENCH_MARCH', 'native')}", "-ffp-contract=off",
         "-shared", "-fPIC"]
_lib: list = []  # the loaded library, built on first use


def version() -> str:
    return subprocess.run([CC, "--version"], capture_output=True, text=True).stdout.split("\n")[0]


def build() -> ctypes.CDLL:
    """Compile c_ref.c afresh and load it (a first call of the C peer includes this)."""
    tmp = tempfile.mkdtemp(prefix="rune_bench_c_")
    atexit.register(shutil.rmtree, tmp, True)  # the library stays mapped until exit
    out = Path(tmp) / "c_ref.so"
    subprocess.run([CC, *FLAGS, str(SOURCE), "-o", str(out), "-lm"], check=True)
    lib = ctypes.CDLL(str(out))
    lib.newton.restype = lib.newton_grad.restype = lib.heavy_tail.restype = ctypes.c_long
    lib.sum_tanh.restype = ctypes.c_double
    _lib[:] = [lib]
    return lib


def first_call() -> None:
    """A first call of the C peer includes compiling c_ref.c (see harness.time_first_call)."""
    build()


def _library() -> ctypes.CDLL:
    return _lib[0] if _lib else build()


def _p(a: np.ndarray) -> ctypes.c_void_p:
    return ctypes.c_void_p(a.ctypes.data)


def w1(p):
    f, xs, n = _library().w1, _p(p.xs), ctypes.c_long(p.n)

    def run():
        ys = np.empty(p.n)
        f(xs, n, _p(ys))
        return ys[-1], ys
    return run


def w2(p):
    f, xs, n = _library().w2, _p(p.xs), ctypes.c_long(p.n)

    def run():
        g = np.empty(p.n)
        f(xs, n, _p(g))
        return g
    return run


def _rnn(lib, p):
    W, U, b, xs, h0 = map(_p, (p.W, p.U, p.b, p.xs, p.h0))
    dims = [ctypes.c_long(v) for v in (p.t, p.h, p.d)]

    def forward():
        hs = np.empty((p.t + 1, p.h))
        lib.rnn(W, U, b, xs, h0, *dims, _p(hs))
        return hs
    return forward


def w3(p):
    forward = _rnn(_library(), p)

    def run():
        hs = forward()
        return hs[-1], hs[1:]
    return run


def w3g(p):
    lib = _library()
    forward, W, xs = _rnn(lib, p), _p(p.W), _p(p.xs)
    dims = [ctypes.c_long(v) for v in (p.t, p.h, p.d)]

    def run():
        hs = forward()
        gW, gU, gb = np.zeros((p.h, p.h)), np.zeros((p.h, p.d)), np.zeros(p.h)
        scratch = [np.empty(p.h), np.empty(p.h)]  # held here: C gets bare pointers
        lib.rnn_adjoint(W, xs, _p(hs), *dims, _p(gW), _p(gU), _p(gb), *map(_p, scratch))
        return gW, gU, gb
    return run


def _lanes(fn, p):
    a, n, steps = _p(p.a), ctypes.c_long(p.a.size), ctypes.c_long(p.max_steps)

    def run():
        x = np.empty(p.a.size)
        lane = fn(a, n, steps, _p(x))
        if lane >= 0:
            raise ValueError(f"newton: lane {lane} still running after {p.max_steps} steps")
        return x
    return run


def heavy_tail(p):
    f, n = _library().heavy_tail, ctypes.c_long(p.a.size)
    a, x0 = _p(p.a), _p(p.x0)

    def run():
        x = np.empty(p.a.size)
        lane = f(a, x0, n, ctypes.c_double(p.tol), ctypes.c_long(p.max_steps), _p(x))
        if lane >= 0:
            raise ValueError(f"heavy_tail: lane {lane} still running after {p.max_steps} steps")
        return x
    return run


def mandelbrot(p):
    f, c, n = _library().mandelbrot, _p(p.c), ctypes.c_long(p.c.size)

    def run():
        steps = np.empty(p.c.size, np.int64)
        f(c, n, ctypes.c_long(p.max_steps), _p(steps))
        return steps
    return run


def w6(p):
    f, W, xs, c0 = _library().deep_grad, _p(p.W), _p(p.xs), _p(p.c0)
    t, h = ctypes.c_long(p.t), ctypes.c_long(p.h)

    def run():
        gW = np.zeros((p.h, p.h))
        scratch = [np.empty((p.t + 1) * p.h), np.empty(p.t * p.h), np.empty(p.h), np.empty(p.h)]
        f(W, xs, c0, t, h, _p(gW), *map(_p, scratch))
        return gW
    return run


def w7(p):
    f, s0, xs, n = _library().pendulum, _p(p.s0), _p(p.xs), ctypes.c_long(p.n)

    def run():
        s, ys = np.empty(2), np.empty(p.n)
        f(s0, xs, n, _p(s), _p(ys))
        return s, ys
    return run


def heat(p):
    lib = _library()
    f32 = p.u0.dtype == np.float32
    f, k = (lib.heatf, ctypes.c_float(p.k)) if f32 else (lib.heat, ctypes.c_double(p.k))
    u0, n, steps = _p(p.u0), ctypes.c_long(p.n), ctypes.c_long(p.steps)

    def run():
        u, scratch = np.empty_like(p.u0), np.empty_like(p.u0)
        f(u0, n, steps, k, _p(u), _p(scratch))
        return u
    return run


def kf(p):
    f, t = _library().kalman, ctypes.c_long(p.t)
    fixed = [np.ascontiguousarray(a) for a in (p.F, p.Q, p.H, p.R, p.zs)]

    def run():
        out = np.empty(20)
        f(*[_p(a) for a in fixed], t, _p(p.x0), _p(p.P0), _p(out))
        return out
    return run


def _w8_args(p):
    ints = [np.ascontiguousarray(a, np.int64) for a in (p.rows, p.cols)]
    n, nnz, steps = (ctypes.c_long(v) for v in (p.n, p.vals.size, p.steps))
    return ints, [_p(p.vals), _p(ints[0]), _p(ints[1]), nnz, _p(p.x0), _p(p.b), n, steps]


def w8(p):
    ints, args = _w8_args(p)

    def run():
        x, y = np.empty(p.n), np.empty(p.n)
        _library().spmv_loop(*args, _p(x), _p(y))
        return x
    run.keep = ints  # the index arrays C reads must live as long as the call
    return run


def w8g(p):
    ints, args = _w8_args(p)

    def run():
        g, xs = np.empty(p.vals.size), np.empty((p.steps + 1) * p.n)
        gx, gy = np.empty(p.n), np.empty(p.n)
        _library().spmv_grad(*args, _p(g), _p(xs), _p(gx), _p(gy))
        return g
    run.keep = ints
    return run


def _openblas() -> ctypes.CDLL:
    """scipy-openblas64's library (the OpenBLAS NumPy and SciPy ship), on one thread."""
    import scipy_openblas64

    lib = ctypes.CDLL(str(next((Path(scipy_openblas64.__file__).parent / "lib").glob(
        "libscipy_openblas*.so*"))))
    lib.scipy_openblas_set_num_threads64_(ctypes.c_int(1))
    return lib


def mm(p):
    """C = A B as a C program calls it: OpenBLAS's dgemm, one thread (row-major C = A B
    is column-major Cᵀ = Bᵀ Aᵀ)."""
    gemm, n = _openblas().scipy_dgemm_64_, p.n
    ref = [ctypes.c_int64(n), ctypes.c_double(1.0), ctypes.c_double(0.0)]
    size, one, zero = (ctypes.byref(v) for v in ref)

    def run():
        c = np.empty((n, n))
        gemm(b"N", b"N", size, size, size, one, _p(p.B), size, _p(p.A), size, zero, _p(c),
             size, ctypes.c_int64(1), ctypes.c_int64(1))
        return c
    run.keep = ref
    return run


IMPLS = {"W1": w1, "W2": w2, "W3": w3, "W3g": w3g, "W7": w7, "W8": w8, "W8g": w8g,
         "W4": lambda p: _lanes(_library().newton, p),
         "W4s": lambda p: _lanes(_library().newton, p),
         "W5": lambda p: _lanes(_library().newton_grad, p), "W6": w6,
         "RM": wl.w3g_with_no_input(w3g), "HS": heat, "HSat": heat, "HS32": heat,
         "KF": kf, "MM": mm, "MB": mandelbrot, "HT": heavy_tail,
         "ST": lambda p: lambda: _library().sum_tanh(_p(p.x), ctypes.c_long(p.n))}
