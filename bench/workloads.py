"""The workloads of the benchmark: sizes per mode, seeded inputs, and which peers run them."""

from __future__ import annotations

from dataclasses import dataclass, field
from types import SimpleNamespace

import numpy as np

MODES = ("full", "quick", "tiny")
PEERS = ("rune_jit", "c", "numba", "jax", "jax_unrolled", "numpy")
TOL = 1e-9  # relative, against rune_jit's result, unless a workload states otherwise


@dataclass(frozen=True)
class Workload:
    name: str
    group: str  # what --only selects: W3 selects W3 and W3g
    title: str
    peers: tuple[str, ...]
    not_applicable: dict  # peer -> why it has no version of this workload
    sizes: dict  # mode -> size parameters
    # peer -> (relative tolerance of the inputs, why) where a peer cannot agree to TOL
    tolerance: dict = field(default_factory=dict)


_HAND = "hand-written adjoint loop"
_NO_REMAT = "no remat variant: its W6 row already keeps only c and W c + x per step"
_W6_SIZES = {"full": dict(t=2000, h=256), "quick": dict(t=200, h=256), "tiny": dict(t=20, h=16)}
_NO_DISPATCH = "not a jit: a ctypes call measures ctypes, not a compiler's dispatch"
_LOOP_KEPT = "compiles a loop written in the source as a loop: nothing unrolled to compare"
_SAME_AS_W1 = "no checks of its own in compiled code: its W1 row is the loop with no check"
_NOT_EAGER = "no eager array library of its own: outside a compiled function it is NumPy"
_NO_AD = "no automatic differentiation: the NumPy row is the gradient by hand"
_NO_VECTOR = "a Python loop of 1e6 two-element steps (seconds a call): nothing to vectorize"
_W9_SIZES = {"full": dict(paths=10_000, steps=500), "quick": dict(paths=10_000, steps=50),
             "tiny": dict(paths=100, steps=10)}
_NO_RNG = "C's standard library has no generator worth comparing (rand() is not one)"
# Numba's and NumPy's np.random draw other numbers, so they agree within the Monte Carlo
# error alone: the price's and its gradient's standard errors are under 3/sqrt(paths)
# of their values here (1.4 %, 1 % and 2.5 % at 10^4 paths); 5 standard errors
_MC_ERROR = (lambda inp: 15 / np.sqrt(inp.paths),
             "np.random's numbers: within 5 Monte Carlo standard errors")
# W10: numpy.linalg's batched calls; the C and Numba versions would be loops of the same
# LAPACK calls NumPy makes
_LAPACK = "a loop of the LAPACK calls NumPy's batched linalg makes: the NumPy row"
_W10 = [("W10", "10^4", 8, {"full": dict(nb=10_000, n=8), "quick": dict(nb=2000, n=8),
                             "tiny": dict(nb=50, n=4)}),
        ("W10b", "100", 64, {"full": dict(nb=100, n=64), "quick": dict(nb=20, n=64),
                              "tiny": dict(nb=4, n=16)})]
# RM: issue 19's reverse-mode memory program, a 16-float carry over 10^6 steps
_RM_SIZES = {"full": dict(t=1_000_000, h=16), "quick": dict(t=100_000, h=16),
             "tiny": dict(t=1000, h=4)}
_NO_REMAT_RM = "no remat variant: its RM row already keeps only c per step"
_NO_VECTOR_RM = "a Python loop of 1e6 steps of a 16-float state (seconds a call)"
# ST: issue 19's big reduction, on every core the peer uses by default
_ST_SIZES = {"full": dict(n=10_000_000), "quick": dict(n=1_000_000), "tiny": dict(n=10_000)}
# MB: issue 34's Mandelbrot set, complex values in a vmapped iterate
_MB_SIZES = {"full": dict(side=1000, max_steps=256), "quick": dict(side=300, max_steps=256),
             "tiny": dict(side=30, max_steps=256)}
# XLA's and NumPy's complex products fuse multiply and add (FMA), C's, Numba's and
# rune_jit's round each: a point on the set's edge may escape a few steps apart (at full
# size two of the 10^6, by 2 steps of 256)
_MB_FUSED = (lambda _: 4 / 256, "fused complex products: a few edge points a step or two apart")
# HT: issue 36's heavy tail: Newton for log a from x0 = log a + d, about d + 5 steps (d < 4
# for 99% of the lanes, 1000 for 1%): a block of lanes in lockstep runs as its slowest
_HT_SIZES = {"full": dict(n=1_000_000, max_steps=2000), "quick": dict(n=100_000, max_steps=2000),
             "tiny": dict(n=1000, max_steps=2000)}
_HT_FAR, HT_TOL = 1000.0, 1e-12
_NO_NUMPY_HT = "a masked NumPy loop runs 10^6 lanes for 1000 steps: the JAX row is that"
# SX: issue 19's softmax cross-entropy training scan: full-batch SGD on a 300 x 5
# logistic regression over 5 classes
_SX_SIZES = {"full": dict(n=300, d=5, k=5, steps=1000),
             "quick": dict(n=300, d=5, k=5, steps=100), "tiny": dict(n=30, d=5, k=5, steps=10)}
SX_LR = 0.5
_NO_C_SX = "a hand loop like Numba's: the Numba row"
# LSM: issue 41's log_softmax in a scan, z' = log_softmax(z) + z0: z_t is t z0 less a
# constant per row, so the rows' spread grows with t and exp's arguments fall below -708
# (results subnormal or 0) within a few dozen steps
_LSM_SIZES = {"full": dict(n=300, k=5, steps=200), "quick": dict(n=300, k=5, steps=200),
              "tiny": dict(n=30, k=5, steps=10)}
_W8_SIZES = {"full": dict(n=10_000, nnz=100_000, steps=1000),
             "quick": dict(n=10_000, nnz=100_000, steps=100),
             "tiny": dict(n=100, nnz=500, steps=10)}

# HS: issue 19's heat stencil, u' = u + k (u[i-1] - 2 u[i] + u[i+1]) inside fixed ends
_HS_SIZES = {"full": dict(n=10_000, steps=10_000), "quick": dict(n=10_000, steps=1000),
             "tiny": dict(n=100, steps=10)}
HEAT_K = 0.25  # at most 1/2: the explicit scheme is stable
_HS_PEERS = ("rune_jit", "c", "numba", "jax", "numpy")
# KF: issue 19's Kalman filter, 4 states observed through a 4x4 H: matrices of 16 elements
_KF_SIZES = {"full": dict(t=100_000), "quick": dict(t=10_000), "tiny": dict(t=100)}
# float32 peers round alike step by step, but an ulp apart anywhere drifts over the steps
_F32 = {peer: (lambda _: 1e-5, "float32 rounding over the steps")
        for peer in _HS_PEERS}

# TF, MM, MC: issue 19's products at the BLAS floor. TF: Tᵀ F of two (L, n) arrays over L
_TF = [(f"TF{e}-{n}", e, n) for e in (5, 6) for n in (16, 64)]
_TF_PEERS = ("rune_jit", "numba", "jax", "numpy")
_NO_C_BLAS = "a hand loop is not what C calls for a product: the NumPy row is OpenBLAS"
_MM_SIZES = {"full": dict(n=1024), "quick": dict(n=512), "tiny": dict(n=64)}
# MC: a scan whose carry is a matrix, C' = tanh(W C + 0.1), n x n, about 10^7 multiply-adds
_MC = [(f"MC{n}", {"full": dict(n=n, steps=steps), "quick": dict(n=n, steps=steps // 10),
                   "tiny": dict(n=min(n, 16), steps=10)})
       for n, steps in ((8, 100_000), (64, 1000), (256, 50))]
_NO_C_MC = "a matrix product a step: the Numba row calls BLAS as C would"

# NLS: issue 34's split-step Fourier solver of i u_t + u_xx / 2 + |u|^2 u = 0
_NLS_SIZES = {"full": dict(n=4096, steps=1000), "quick": dict(n=4096, steps=100),
              "tiny": dict(n=256, steps=10)}
_FT_SIZES = {"full": dict(rows=256, n=4096), "quick": dict(rows=64, n=4096),
             "tiny": dict(rows=4, n=256)}
_NO_FFT = "no FFT it can call from compiled code (C would call a library: NumPy's row)"
_NO_AD_NLS = "no automatic differentiation, and no adjoint of the solver by hand"
_NO_C_FILL = "a loop writing rows into a buffer, as Numba's: the Numba row"
_FILL_SIZES = {"full": dict(rows=4000, n=256), "quick": dict(rows=1000, n=256),
               "tiny": dict(rows=20, n=16)}
# CK: issue 35's long rollout, a 1024-float tanh recurrence over 10^5 steps whose tape
# holds 800 MB; its coupling is a circulant stencil (a dense 1024 x 1024 W would make
# the row a matrix-vector benchmark of 40 s a call)
_CK_SIZES = {"full": dict(t=100_000, h=1024, k=64), "quick": dict(t=10_000, h=1024, k=64),
             "tiny": dict(t=200, h=16, k=8)}
_NO_AD_CK = "no automatic differentiation: a hand adjoint with checkpoints is not a peer's"
# IL: issue 35's implicit layer, the nonlinear elliptic PDE -lap(u) + u^3 = f on an
# n x n grid (4096 unknowns at full size), solved by Newton with conjugate gradients
_IL_SIZES = {"full": dict(n=64, newton=6), "quick": dict(n=32, newton=6),
             "tiny": dict(n=8, newton=6)}
_NO_AD_IL = "no automatic differentiation of a solve"
IL_TOL = 1e-11  # conjugate gradients' relative residual
# each CG stops at its own residual, which the peers reach by other roundings
_IL_CG = {"jax": (lambda _: 1e-7, "CG to a relative residual of 1e-11 in each peer")}

WORKLOADS = [
    Workload("W1", "W1", "scalar scan c' = c*0.999999 + sin(x), ys = c'",
             ("rune_jit", "c", "numba", "jax", "numpy"), {},
             {"full": dict(n=1_000_000), "quick": dict(n=100_000), "tiny": dict(n=1000)}),
    Workload("W1c", "W1", "W1 with a check in its step: check(isfinite(c), ...) (JAX: "
             "checkify's check, jit of checkify; compare with W1's row)", ("rune_jit", "jax"),
             dict(c=_SAME_AS_W1, numba=_SAME_AS_W1, numpy=_SAME_AS_W1),
             {"full": dict(n=1_000_000), "quick": dict(n=100_000), "tiny": dict(n=1000)}),
    Workload("W2", "W2", "gradient of W1's final carry w.r.t. all of xs (" + _HAND + "s)",
             ("rune_jit", "c", "numba", "jax", "numpy"), {},
             {"full": dict(n=1_000_000), "quick": dict(n=100_000), "tiny": dict(n=1000)}),
    Workload("W3", "W3", "RNN forward h' = tanh(W h + U x + b), ys = h",
             ("rune_jit", "c", "numba", "jax", "numpy"), {},
             {"full": dict(t=1000, h=64, d=32), "quick": dict(t=200, h=64, d=32),
              "tiny": dict(t=20, h=8, d=4)}),
    Workload("W3g", "W3", "RNN: gradient of sum(final h) w.r.t. (W, U, b)",
             ("rune_jit", "c", "numba", "jax", "numpy"), {},
             {"full": dict(t=1000, h=64, d=32), "quick": dict(t=200, h=64, d=32),
              "tiny": dict(t=20, h=8, d=4)}),
    Workload("W4", "W4", "vmapped Newton sqrt, a log-uniform in [1e-6, 1e12], max_steps=200",
             ("rune_jit", "c", "numba", "jax", "numpy"), {},
             {"full": dict(n=100_000, max_steps=200), "quick": dict(n=10_000, max_steps=200),
              "tiny": dict(n=1000, max_steps=200)}),
    Workload("W4s", "W4s", "W4 with 0.1% of lanes at a = 1e300 (stragglers), max_steps=2000",
             ("rune_jit", "c", "numba", "jax", "numpy"), {},
             {"full": dict(n=100_000, max_steps=2000), "quick": dict(n=10_000, max_steps=2000),
              "tiny": dict(n=1000, max_steps=2000)}),
    Workload("W5", "W5", "gradient of sum(root(x*x - a, Newton)) w.r.t. a, diagonal solver",
             ("rune_jit", "c", "numba", "jax", "jax_unrolled", "numpy"), {},
             {"full": dict(n=10_000, max_steps=200), "quick": dict(n=2000, max_steps=200),
              "tiny": dict(n=100, max_steps=200)}),
    Workload("W6", "W6", "gradient w.r.t. W of sum(final c), c' = tanh(sin(W c + x)), no remat",
             ("rune_jit", "c", "numba", "jax", "numpy"), {},
             _W6_SIZES),
    Workload("W6r", "W6", "W6 with rune.remat / jax.checkpoint on the step",
             ("rune_jit", "jax"), dict(c=_NO_REMAT, numba=_NO_REMAT, numpy=_NO_REMAT),
             _W6_SIZES),
    Workload("RM", "RM", "reverse-mode memory: gradient w.r.t. (W, b) of sum(final c), "
             "c' = tanh(W c + b), no xs (C, Numba: W3g's loops with no input)",
             ("rune_jit", "c", "numba", "jax"), dict(numpy=_NO_VECTOR_RM), _RM_SIZES),
    Workload("RMr", "RM", "RM with rune.remat / jax.checkpoint on the step", ("rune_jit", "jax"),
             dict(c=_NO_REMAT_RM, numba=_NO_REMAT_RM, numpy=_NO_REMAT_RM), _RM_SIZES),
    Workload("W7", "W7", "small carry: driven damped pendulum, state [θ, ω] a 2-vector, "
             "explicit Euler, ys = θ",
             ("rune_jit", "c", "numba", "jax"), dict(numpy=_NO_VECTOR),
             {"full": dict(n=1_000_000), "quick": dict(n=100_000), "tiny": dict(n=1000)}),
    Workload("W8", "W8", "sparse (COO) matrix-vector products in a scan: x' = tanh(A x + b) "
             "with A x = segment_sum(vals * x[cols], rows)",
             ("rune_jit", "c", "numba", "jax", "numpy"), {}, _W8_SIZES),
    Workload("W8g", "W8", "W8: gradient of sum(final x) w.r.t. the matrix's values",
             ("rune_jit", "c", "numba", "jax"), dict(numpy=_HAND + ": the C and Numba rows"),
             _W8_SIZES),
    Workload("W9", "W9", "Monte Carlo: a call's price mean(max(X_T - 1, 0)) over Euler–Maruyama "
             "paths of dX = mu X dt + sigma X dW, normal draws made inside the scan step",
             ("rune_jit", "numba", "jax", "numpy"), dict(c=_NO_RNG), _W9_SIZES,
             dict(numba=_MC_ERROR, numpy=_MC_ERROR)),
    Workload("W9g", "W9", "W9: pathwise gradient of the price w.r.t. (mu, sigma) (Numba, "
             "NumPy: forward tangents by hand)",
             ("rune_jit", "numba", "jax", "numpy"), dict(c=_NO_RNG), _W9_SIZES,
             dict(numba=_MC_ERROR, numpy=_MC_ERROR)),
    *[Workload(name, "W10", f"batched linear algebra on {nb} SPD {n}x{n} matrices: "
               "solve(A, b), cholesky(A), eigh(A) (w and the squares of v)",
               ("rune_jit", "jax", "numpy"), dict(c=_LAPACK, numba=_LAPACK), sizes)
      for name, nb, n, sizes in _W10],
    Workload("HS", "HS", "heat stencil, u' = concatenate([u[:1], u[1:-1] + k (u[:-2] - "
             "2 u[1:-1] + u[2:]), u[-1:]]) (C, Numba: two buffers that swap)", _HS_PEERS, {},
             _HS_SIZES),
    Workload("HSat", "HS", "HS written u' = u.at[1:-1].set(...) (C, Numba: HS's loops)",
             _HS_PEERS, {}, _HS_SIZES),
    Workload("HS32", "HS", "HS in float32", _HS_PEERS, {}, _HS_SIZES, _F32),
    Workload("U", "U", "a Python for loop of 1000 steps inside jit, x = sin(x) * 0.99 + "
             "0.01 * i on 8 elements: the trace unrolls it (what its first call compiles)",
             ("rune_jit", "jax", "numpy"), dict(c=_LOOP_KEPT, numba=_LOOP_KEPT),
             {"full": dict(steps=1000), "quick": dict(steps=1000), "tiny": dict(steps=20)}),
    Workload("D", "D", "dispatch: jitted x + 1 on a one-element float64 array",
             ("rune_jit", "numba", "jax", "numpy"), dict(c=_NO_DISPATCH),
             {m: {} for m in MODES}),
    # issue 18: eager calls (outside jit) near NumPy, and jitted calls of numbers, dicts
    # and static values near the dispatch of arrays
    *[Workload(f"E{fn}{label}", "E", f"eager rnp.{fn} on {n} float64 element{'s' * (n > 1)} "
               f"(NumPy: np.{fn}, JAX: jnp.{fn})", ("rune_jit", "jax", "numpy"),
               dict(c=_NOT_EAGER, numba=_NOT_EAGER), {m: dict(n=n) for m in MODES})
      for fn in ("add", "sin", "sum") for n, label in ((1, "1"), (1000, "1k"))],
    Workload("Egrad", "E", "eager rune.grad(f)(x), f(x) = sum(sin(x) * x), 16 elements: a new "
             "grad(f) each call, as typed at a prompt (NumPy: the gradient by hand)",
             ("rune_jit", "jax", "numpy"), dict(c=_NO_AD, numba=_NO_AD),
             {m: dict(n=16) for m in MODES}),
    Workload("Egrad-jit", "E", "Egrad jitted: rune.jit(rune.grad(f))(x)",
             ("rune_jit", "jax", "numba", "numpy"), dict(c=_NO_DISPATCH),
             {m: dict(n=16) for m in MODES}),
    Workload("Escan", "E", "eager rune.scan of W1's step over 1000 rows (JAX: lax.scan "
             "outside jit)", ("rune_jit", "jax", "numpy"), dict(c=_NOT_EAGER, numba=_NOT_EAGER),
             {m: dict(n=1000) for m in MODES}),
    Workload("Escan-jit", "E", "Escan jitted: W1 at 1000 rows",
             ("rune_jit", "jax", "numba", "numpy"), dict(c=_NO_DISPATCH),
             {m: dict(n=1000) for m in MODES}),
    Workload("KF", "KF", "Kalman filter in a scan, 4 states, 4x4 matrices (F, P, Q, H, R, "
             "S = H P H' + R solved each step): the final state and covariance",
             ("rune_jit", "c", "numba", "jax", "numpy"),
             dict(numpy="10^5 Python steps of ten small NumPy calls each"), _KF_SIZES),
    Workload("ST", "ST", "sum(tanh(x)), x 10^7 float64: a reduction to a scalar (on the "
             "pool's threads) and tanh's cost an element", ("rune_jit", "c", "numba", "jax",
                                                            "numpy"), {}, _ST_SIZES),
    Workload("SX", "SX", "softmax cross-entropy training: a scan of full-batch SGD steps W -= "
             "lr grad(mean(logsumexp(X W) - (X W)[label])), X 300 x 5, 5 classes; ys = losses",
             ("rune_jit", "numba", "jax", "numpy"), dict(c=_NO_C_SX), _SX_SIZES),
    Workload("LSM", "LSM", "log_softmax over a length-5 axis in a scan, z' = log_softmax(z) + "
             "z0, z0 300 x 5 N(0, 9): exp's arguments drift below -708 (results 0, subnormal)",
             ("rune_jit", "numba", "jax", "numpy"), dict(c=_NO_C_SX), _LSM_SIZES),
    *[Workload(name, "TF", f"Tᵀ F, T and F (10^{e} x {n}) float64: a long contraction "
               "into a small output", _TF_PEERS, dict(c=_NO_C_BLAS),
               {"full": dict(L=10 ** e, n=n), "quick": dict(L=10 ** (e - 1), n=n),
                "tiny": dict(L=1000, n=min(n, 16))}) for name, e, n in _TF],
    Workload("MM", "MM", "matmul of two 1024 x 1024 float64 matrices (C: OpenBLAS's dgemm on "
             "one thread, scipy-openblas64 through ctypes)",
             ("rune_jit", "c", "numba", "jax", "numpy"), {}, _MM_SIZES),
    *[Workload(name, "MC", f"matrix-carry scan C' = tanh(W C + 0.1), {sizes['full']['n']} x "
               f"{sizes['full']['n']}, {sizes['full']['steps']} steps: the final C",
               ("rune_jit", "numba", "jax", "numpy"), dict(c=_NO_C_MC), sizes)
      for name, sizes in _MC],
    Workload("MB", "MB", "Mandelbrot set: steps of z' = z*z + c from 0 until |z| > 2, at most "
             "256, over a grid of complex c (vmap of iterate)",
             ("rune_jit", "c", "numba", "jax", "numpy"), {}, _MB_SIZES,
             {peer: _MB_FUSED for peer in ("jax", "numpy")}),
    Workload("HT", "HT", "vmapped Newton for log a (x' = x - 1 + a exp(-x)) from x0 = log a + "
             "d over 10^6 lanes: d < 4 for 99% of them (<= 10 steps), d = 1000 for 1% (about "
             "1000 steps); Numba: prange over the lanes", ("rune_jit", "c", "numba", "jax"),
             dict(numpy=_NO_NUMPY_HT), _HT_SIZES),
    Workload("NLS", "NLS", "split-step Fourier solver of the nonlinear Schrödinger "
             "equation: 1000 steps of u <- ifft(L fft(u)) exp(i dt |u|^2), 4096 points, in a "
             "scan, from a sech pulse (amp, width): the spread sum(|u|^2 x^2) dx",
             ("rune_jit", "jax", "numpy"), dict(c=_NO_FFT, numba=_NO_FFT), _NLS_SIZES),
    Workload("NLSg", "NLS", "gradient of NLS's spread with respect to the pulse's (amp, "
             "width)", ("rune_jit", "jax"), dict(c=_NO_FFT, numba=_NO_FFT, numpy=_NO_AD_NLS),
             _NLS_SIZES),
    Workload("FT", "FT", "fft of 256 complex128 signals of 4096 points: the transforms alone",
             ("rune_jit", "jax", "numpy"), dict(c=_NO_FFT, numba=_NO_FFT), _FT_SIZES),
    Workload("FILL", "FILL", "a 4000 x 256 buffer filled row by row in a fori_loop: "
             "b.at[i].set(sin(x * i)) (the loop carry updated in place)",
             ("rune_jit", "numba", "jax", "numpy"), dict(c=_NO_C_FILL), _FILL_SIZES),
    Workload("CK", "CK", "reverse mode of a long rollout, the tape: gradient w.r.t. (a, s, b) "
             "of sum(final c), c' = tanh(a c + s roll(c, 1) + b), c 1024 floats, 10^5 steps",
             ("rune_jit", "jax"), dict(c=_NO_AD_CK, numba=_NO_AD_CK, numpy=_NO_AD_CK),
             _CK_SIZES),
    Workload("CKk", "CK", "CK in bounded memory: rune_jit scan(..., checkpoints=64) (binomial "
             "schedule), JAX jax.checkpoint on blocks of sqrt(t) steps of a nested scan",
             ("rune_jit", "jax"), dict(c=_NO_AD_CK, numba=_NO_AD_CK, numpy=_NO_AD_CK),
             _CK_SIZES),
    Workload("IL", "IL", "implicit layer: gradient w.r.t. f of sum(w u) where -lap(u) + u^3 = "
             "f on a 64 x 64 grid (Newton with CG), through root(linear_solve=CG) "
             "(JAX: lax.custom_root with a CG tangent_solve)", ("rune_jit", "jax"),
             dict(c=_NO_AD_IL, numba=_NO_AD_IL, numpy=_NO_AD_IL), _IL_SIZES, _IL_CG),
    Workload("ILd", "IL", "IL with the Jacobian formed and solved by LU: root's "
             "linear_solver='dense' (JAX: jacfwd and linalg.solve as tangent_solve)",
             ("rune_jit", "jax"), dict(c=_NO_AD_IL, numba=_NO_AD_IL, numpy=_NO_AD_IL),
             _IL_SIZES, _IL_CG),
    Workload("Dmix", "Dmix", "dispatch: jitted x * s + d['a'] - d['b'] * n, x a one-element "
             "array, s a Python float, d a dict of two one-element arrays, n a static int "
             "(Numba: d's arrays as two arguments)", ("rune_jit", "numba", "jax", "numpy"),
             dict(c=_NO_DISPATCH), {m: {} for m in MODES}),
    Workload("Dmix-arrays", "Dmix", "Dmix's function with every argument a contiguous "
             "array (s 0-d, d's arrays two arguments, n fixed): its all-array dispatch",
             ("rune_jit", "numba", "jax", "numpy"), dict(c=_NO_DISPATCH),
             {m: {} for m in MODES}),
]
BY_NAME = {w.name: w for w in WORKLOADS}
MB_WINDOW = (-2.0, 0.6, -1.3, 1.3)  # the set and its surroundings, as bench/speedup.py's
MU, SIGMA, HORIZON = 0.05, 0.2, 1.0  # W9


def select(only: str | None) -> list[Workload]:
    """The workloads `--only` names (by name or group), all of them without it."""
    if not only:
        return list(WORKLOADS)
    wanted = {s.strip() for s in only.split(",") if s.strip()}
    unknown = wanted - {w.name for w in WORKLOADS} - {w.group for w in WORKLOADS}
    if unknown:
        raise SystemExit(f"--only: unknown workloads {sorted(unknown)}; "
                         f"known: {', '.join(w.name for w in WORKLOADS)}")
    return [w for w in WORKLOADS if w.name in wanted or w.group in wanted]


def inputs(w: Workload, mode: str) -> SimpleNamespace:
    """The workload's inputs in `mode`: float64 arrays from a fixed seed."""
    size = w.sizes[mode]
    rng = np.random.default_rng(20240501)
    if w.group in ("W1", "W2"):
        return SimpleNamespace(xs=rng.uniform(-3.0, 3.0, size["n"]), **size)
    if w.group == "W3":
        t, h, d = size["t"], size["h"], size["d"]
        # W's spectral radius about 0.5: contracting, so rounding differences between
        # peers fade instead of growing over the steps
        return SimpleNamespace(W=rng.normal(0, 0.5 / np.sqrt(h), (h, h)),
                               U=rng.normal(0, 1 / np.sqrt(d), (h, d)),
                               b=rng.normal(0, 0.1, h), xs=rng.normal(size=(t, d)),
                               h0=np.zeros(h), **size)
    if w.group in ("W4", "W4s", "W5"):
        a = np.exp(rng.uniform(np.log(1e-6), np.log(1e12), size["n"]))
        if w.name == "W4s":
            a[rng.choice(a.size, max(1, a.size // 1000), replace=False)] = 1e300
        return SimpleNamespace(a=a, **size)
    if w.group == "W7":  # damping: rounding differences between peers fade
        return SimpleNamespace(xs=rng.normal(0, 0.5, size["n"]), s0=np.array([1.0, 0.0]),
                               **size)
    if w.group == "W8":  # a contracting map: rounding differences fade over the steps
        n, nnz = size["n"], size["nnz"]
        return SimpleNamespace(rows=rng.integers(0, n, nnz), cols=rng.integers(0, n, nnz),
                               vals=rng.normal(0, 0.5 / np.sqrt(nnz / n), nnz),
                               b=rng.normal(0, 0.1, n), x0=np.zeros(n), **size)
    if w.group == "KF":  # a tracked point's position and velocity, observed noisily
        t, dt = size["t"], 0.01
        F = np.eye(4) + dt * np.eye(4, k=2)
        H = np.eye(4) + 0.05 * rng.normal(size=(4, 4))
        truth = np.cumsum(rng.normal(0, 0.1, (t, 4)), axis=0)
        return SimpleNamespace(F=F, Q=0.01 * np.eye(4), H=H, R=0.1 * np.eye(4),
                               zs=truth @ H.T + rng.normal(0, 0.3, (t, 4)), x0=np.zeros(4),
                               P0=np.eye(4), **size)
    if w.group == "TF":
        return SimpleNamespace(T=rng.normal(size=(size["L"], size["n"])),
                               F=rng.normal(size=(size["L"], size["n"])), **size)
    if w.group == "MM":
        return SimpleNamespace(A=rng.normal(size=(size["n"],) * 2),
                               B=rng.normal(size=(size["n"],) * 2), **size)
    if w.group == "MC":  # W's spectral radius about 0.5: contracting
        n = size["n"]
        return SimpleNamespace(W=rng.normal(0, 0.5 / np.sqrt(n), (n, n)),
                               C0=rng.normal(size=(n, n)), **size)
    if w.group == "ST":
        return SimpleNamespace(x=rng.normal(size=size["n"]), **size)
    if w.group == "SX":  # labels from a noisy linear model, so that the classes overlap
        n, d, k = size["n"], size["d"], size["k"]
        X = rng.normal(size=(n, d))
        scores = X @ rng.normal(size=(d, k)) + rng.gumbel(size=(n, k))
        return SimpleNamespace(X=X, labels=np.argmax(scores, axis=1),
                               W0=np.zeros((d, k)), lr=SX_LR, **size)
    if w.group == "LSM":
        return SimpleNamespace(z0=rng.normal(0.0, 3.0, (size["n"], size["k"])), **size)
    if w.group == "W9":
        return SimpleNamespace(seed=20240501, mu=MU, sigma=SIGMA, dt=HORIZON / size["steps"],
                               **size)
    if w.group == "W10":
        nb, n = size["nb"], size["n"]
        b = rng.normal(size=(nb, n, n))
        return SimpleNamespace(A=b @ b.transpose(0, 2, 1) + n * np.eye(n),
                               b=rng.normal(size=(nb, n, 1)), **size)
    if w.group == "RM":  # also given as W3g's inputs with no input rows (d = 0)
        t, h = size["t"], size["h"]
        return SimpleNamespace(W=rng.normal(0, 0.5 / np.sqrt(h), (h, h)),
                               b=rng.normal(0, 0.1, h), h0=np.zeros(h), U=np.zeros((h, 0)),
                               xs=np.zeros((t, 0)), d=0, **size)
    if w.group == "W6":
        t, h = size["t"], size["h"]
        return SimpleNamespace(W=rng.normal(0, 0.5 / np.sqrt(h), (h, h)),
                               xs=rng.normal(size=(t, h)), c0=np.zeros(h), **size)
    if w.group == "E":  # W1's rows for the scans
        return SimpleNamespace(a=rng.uniform(-3.0, 3.0, size["n"]),
                               b=rng.uniform(-3.0, 3.0, size["n"]),
                               xs=rng.uniform(-3.0, 3.0, size["n"]), **size)
    if w.group == "HS":
        dtype = np.float32 if w.name == "HS32" else np.float64
        return SimpleNamespace(u0=rng.uniform(0.0, 1.0, size["n"]).astype(dtype), k=HEAT_K,
                               **size)
    if w.group == "U":
        return SimpleNamespace(x=np.linspace(0.0, 1.0, 8), **size)
    if w.group == "MB":
        return SimpleNamespace(c=mandelbrot_grid(size["side"]), **size)
    if w.group == "HT":
        a = np.exp(rng.uniform(np.log(1e-3), np.log(1e3), size["n"]))
        d = rng.uniform(0.0, 4.0, size["n"])
        d[rng.random(size["n"]) < 0.01] = _HT_FAR
        return SimpleNamespace(a=a, x0=np.log(a) + d, tol=HT_TOL, **size)
    if w.group == "NLS":  # a grid of length 40, an initial pulse near a soliton's
        n, length = size["n"], 40.0
        return SimpleNamespace(x=np.linspace(-length / 2, length / 2, n, endpoint=False),
                               k=2 * np.pi * np.fft.fftfreq(n, length / n), dx=length / n,
                               dt=1e-3, params=np.array([1.2, 0.8]), **size)
    if w.group == "FILL":
        return SimpleNamespace(x=rng.uniform(-1.0, 1.0, size["n"]), **size)
    if w.group == "IL":  # a forcing bump, strong enough that u^3 matters
        n = size["n"]
        x = np.linspace(0.0, 1.0, n + 2)[1:-1]
        bump = np.exp(-30.0 * ((x[:, None] - 0.4) ** 2 + (x[None, :] - 0.6) ** 2))
        return SimpleNamespace(f=(300.0 * bump + rng.normal(0, 1.0, (n, n))).ravel(),
                               w=rng.uniform(0.0, 1.0, n * n), **size)
    if w.group == "CK":  # |a| + |s| < 1: contracting, so the peers' rounding fades
        h = size["h"]
        return SimpleNamespace(a=rng.uniform(0.3, 0.6, h), s=rng.uniform(-0.3, 0.3, h),
                               b=rng.normal(0, 0.5, h), c0=rng.normal(size=h), **size)
    if w.group == "FT":
        shape = (size["rows"], size["n"])
        return SimpleNamespace(z=rng.normal(size=shape) + 1j * rng.normal(size=shape), **size)
    if w.group == "Dmix":
        return SimpleNamespace(x=np.array([1.5]), s=2.0, n=3,
                               d={"a": np.array([0.5]), "b": np.array([0.25])})
    return SimpleNamespace(x=np.array([1.5]))


def gradient_args(name: str, p: SimpleNamespace) -> tuple:
    """W6, W6r, RM, RMr, CK, CKk, IL, ILd, in every peer: (the arguments the gradient is taken by,
    as `argnums`, and all the arguments)."""
    if name in ("CK", "CKk"):
        return (0, 1, 2), (p.a, p.s, p.b, p.c0)
    if name in ("IL", "ILd"):
        return 0, (p.f, p.w)
    if name in ("RM", "RMr"):
        return (0, 1), (p.W, p.b, p.h0)
    return 0, (p.W, p.xs, p.c0)


def kalman(np_like, solve, scan):
    """KF's filter for a NumPy-like namespace (rune_jit.numpy, jax.numpy) and its `solve`
    and `scan`: the final state and covariance, as one array."""
    def run(F, Q, H, R, zs, x0, P0):
        def step(carry, z):
            x, P = carry
            x, P = F @ x, F @ P @ F.T + Q
            S = H @ P @ H.T + R
            K = solve(S, H @ P).T  # P H' S^-1, S and P symmetric
            return (x + K @ (z - H @ x), P - K @ (H @ P)), None
        x, P = scan(step, (x0, P0), zs)[0]
        return np_like.concatenate([x, P.ravel()])
    return run


def matrix_carry(np_like, scan, steps: int):
    """MC's scan for a NumPy-like namespace and its `scan`: the final carry."""
    def run(W, C0):
        return scan(lambda C, _: (np_like.tanh(W @ C + 0.1), None), C0, None,
                    length=steps)[0]
    return run


def softmax_training(np_like, log_softmax, value_and_grad, scan, lr: float, steps: int):
    """SX's training scan for a NumPy-like namespace and its transformations (rune_jit's,
    JAX's): (the trained weights, the loss at each step)."""
    def xent(W, X, labels):
        logp = log_softmax(X @ W, axis=-1)
        return -np_like.mean(logp[np_like.arange(X.shape[0]), labels])

    def train(W0, X, labels):
        def step(W, _):
            loss, g = value_and_grad(xent)(W, X, labels)
            return W - lr * g, loss
        return scan(step, W0, length=steps)
    return train


def log_softmax_scan(log_softmax, scan, steps: int):
    """LSM's scan for a `log_softmax(z, axis)` and a `scan`: z0 -> the final z."""
    def run(z0):
        return scan(lambda z, _: (log_softmax(z, axis=-1) + z0, None), z0, None,
                    length=steps)[0]
    return run


def w3g_with_no_input(w3g):
    """RM in a peer that has W3g: W3g's loops with no input rows (d = 0), so that
    h' = tanh(W h + b); -> the gradients w.r.t. (W, b)."""
    def make(p):
        run = w3g(p)

        def grads():
            gW, _, gb = run()
            return gW, gb
        return grads
    return make


def nls(np_like, scan, p: SimpleNamespace):
    """NLS's solver for a NumPy-like namespace with `fft` and its `scan`: (amp, width) ->
    the spread of |u|^2 after p.steps steps."""
    linear = np.exp(-0.5j * p.k ** 2 * p.dt)  # the dispersion step, exact in Fourier space

    def spread(params):
        u0 = params[0] / np_like.cosh(p.x / params[1]) + 0j

        def step(u, _):
            u = np_like.fft.ifft(linear * np_like.fft.fft(u))
            return u * np_like.exp(1j * p.dt * np_like.abs(u) ** 2), None

        u = scan(step, u0, None, length=p.steps)[0]
        return np_like.sum(np_like.abs(u) ** 2 * p.x ** 2) * p.dx
    return spread


def rollout(np_like, scan, p: SimpleNamespace, checkpoints=None):
    """CK's loss for a NumPy-like namespace and its scan: sum(final c) after p.t steps;
    `checkpoints(step, c0)` runs the loop instead of one scan where given."""
    def loss(a, s, b, c0):
        def step(c, _):
            return np_like.tanh(a * c + s * np_like.roll(c, 1) + b), None
        return np_like.sum(checkpoints(step, c0) if checkpoints else
                           scan(step, c0, None, length=p.t)[0])
    return loss


def implicit_layer(np_like, cg, root, p: SimpleNamespace):
    """IL's loss for a NumPy-like namespace, its `cg(matvec, b)` and its
    `root(residual, solve)`: sum(w u) at the u where -lap(u) + u^3 = f."""
    n, h2 = p.n, (p.n + 1.0) ** 2

    def lap(v):  # minus the 5-point Laplacian, zero on the boundary
        u = np_like.pad(v.reshape(n, n), 1)
        return ((4 * u[1:-1, 1:-1] - u[:-2, 1:-1] - u[2:, 1:-1] - u[1:-1, :-2]
                 - u[1:-1, 2:]) * h2).ravel()

    def loss(f, w):
        def residual(u):
            return lap(u) + u ** 3 - f

        def solve():
            u = np_like.zeros_like(f)
            for _ in range(p.newton):
                u = u - cg(lambda v, u=u: lap(v) + 3 * u ** 2 * v, residual(u))
            return u
        return np_like.sum(w * root(residual, solve))
    return loss


def newton_steps(a: np.ndarray, max_steps: int) -> np.ndarray:
    """Steps each lane of the Newton sqrt takes (the until test comes before each step)."""
    x, steps = a.copy(), np.zeros(a.size, np.int64)
    with np.errstate(over="ignore"):  # x*x is inf while x is far above sqrt(1e300)
        live = np.flatnonzero(~(np.abs(x * x - a) <= 1e-12 * a))
        for _ in range(max_steps):
            if not live.size:
                break
            x[live] = (x[live] + a[live] / x[live]) / 2
            steps[live] += 1
            live = live[~(np.abs(x[live] * x[live] - a[live]) <= 1e-12 * a[live])]
    return steps


def mandelbrot_grid(side: int) -> np.ndarray:
    """side x side complex points over MB_WINDOW, flattened (one lane each)."""
    x0, x1, y0, y1 = MB_WINDOW
    re, im = np.meshgrid(np.linspace(x0, x1, side), np.linspace(y0, y1, side))
    return (re + 1j * im).ravel()


def note(w: Workload, inp: SimpleNamespace) -> str:
    """Facts about the inputs a reader needs to judge the timings."""
    if w.group not in ("W4", "W4s", "W5"):
        return ""
    steps = newton_steps(inp.a, inp.max_steps)
    if w.name != "W4s":
        return f"steps per lane: median {int(np.median(steps))}, max {steps.max()}"
    far = inp.a == 1e300
    return (f"{far.sum()} straggler lanes take {steps[far].min()}-{steps[far].max()} steps; "
            f"the others at most {steps[~far].max()}")


def fill_rows(np_like, fori_loop, rows: int):
    """FILL's program for a NumPy-like namespace and its fori_loop: x -> the buffer whose
    row i is sin(x * i)."""
    def fill(x):
        buf = np_like.zeros((rows, x.shape[0]))
        return fori_loop(0, rows, lambda i, b: b.at[i].set(np_like.sin(x * i)), buf)
    return fill
