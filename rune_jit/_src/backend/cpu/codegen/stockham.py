"""Complex FFTs of power-of-two lengths as generated code: Stockham's autosort algorithm,
radix 8 (then one pass of radix 4 or 2), one function per length and dtype.

The method is the Stockham autosort FFT in its decimation-in-frequency form (C. Van Loan,
"Computational Frameworks for the Fast Fourier Transform", SIAM 1992, section 1.7; the
loop order of OTFFT's Stockham kernels, T. Okahisa). A pass of radix r on the current
length L (stride s = n / L, m = L / r) reads r elements m * s apart and writes them
r * s apart after a butterfly and a twiddle multiply:

    for p in range(m):                  # the twiddles w**(k*p), w = exp(-2j*pi/L)
        for q in range(s):              # s contiguous elements: what LLVM vectorizes
            v[k] = x[q + s*(p + k*m)]               for k in range(r)
            y[q + s*(r*p + k)] = w**(k*p) * DFT_r(v)[k]

and the last pass leaves the result in natural order: no bit reversal, so every pass is
streams of loads and stores that the loop vectorizer widens (the first pass, s = 1, over
p; the others over q). The 8-point DFT is one radix-2 step to two 4-point ones, its
twiddles (powers of exp(-2j*pi/8)) additions and sign changes.

Why our own for these lengths rather than pocketfft (runtime/pocketfft.py), measured on
the bench machine (AVX-512, 4096 complex128 points): ~15 us a transform in a batch, where
pocketfft takes ~23 us in a batch and ~40 us called for one (its plan lookup and copies
per call, which a loop step pays twice); radix 8 takes 4 passes through memory where
radix 4 took 6 (15-25% faster). Plain loops LLVM vectorizes for the host CPU.

Operands and results are NumPy's memory of complex numbers (real and imaginary parts
interleaved), as fft_memory's are; the passes in between keep the parts apart in two
scratch buffers the caller passes (`work`: 4 * n reals), so only the first pass reads
interleaved parts and only the last writes them, with the `scale` factor. The kernel
is the forward transform; the backward one is conj(forward(conj(x))), the conjugations
folded into the first pass's loads and the last pass's stores (the `conj` argument), so
one kernel serves both. Each kernel is a module of its own (`module_ir`), which programs
call by name and runtime/fft_kernels.py compiles once per process; its twiddles are a
table NumPy computes (`twiddles`) and the kernel reads by address, not constants of its
module (8192 of them at 4096 points were a third of its compile time).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import llvmlite.ir as ir
import numpy as np

from .emit import F32, F64, I64, PTR

# Longest length generated: the twiddle table (n complex numbers a kernel, 1 MB at 2**16
# in float64) and the scratch grow with n, and beyond 2**16 a transform leaves the
# caches: pocketfft took about our time there (2**17 to 2**22, measured). Longer
# transforms call pocketfft.
MAX_LENGTH = 1 << 16


def covers(n: int) -> bool:
    """Whether the c2c transform of length n is generated code (powers of two from 2)."""
    return 2 <= n <= MAX_LENGTH and n & (n - 1) == 0


def radices(n: int) -> list[int]:
    """Radix 8 while it divides, then one pass of 4 or 2 (where s = n / 4 or n / 2:
    contiguous). Fewer passes are fewer trips through memory: radix 8 takes 4096
    points in 4 passes where radix 4 took 6, and 30% less time."""
    out = []
    while n % 8 == 0:
        out, n = out + [8], n // 8
    return out + [n] * (n > 1)


@dataclass(frozen=True)
class Side:
    """Where a pass reads or writes complex element i: re[i * step], im[i * step]; a part
    read or written there is times its factor, if any (the conjugations that make the
    forward kernel a backward one, and the last pass's `scale`)."""
    re: ir.Value
    im: ir.Value
    step: int
    re_factor: ir.Value | None = None
    im_factor: ir.Value | None = None


PREFIX = "rune_fft_stockham_"
_SYMBOL = re.compile(PREFIX + r"([0-9]+)_(f32|f64)")
REALS = {"f32": F32, "f64": F64}


def symbol(n: int, dtype: np.dtype) -> str:
    """The name of the kernel of length n and dtype (the real parts')."""
    return f"{PREFIX}{n}_f{8 * np.dtype(dtype).itemsize}"


def table_symbol(name: str) -> str:
    """The name of the twiddle table kernel `name` reads (runtime/fft_kernels.py gives
    its address)."""
    return f"{name}.twiddles"


def signature(real: ir.Type) -> ir.FunctionType:
    """`void f(in, out, work, rows, scale, conj)`: `rows` transforms from `in` to `out`
    (interleaved memory, rows after one another), each result times `scale`; `work`
    holds 4 * n reals of scratch. `conj` is 1 for the forward transform, -1 for the
    backward one: conj(forward(conj(x))), so that one kernel serves both directions."""
    return ir.FunctionType(ir.VoidType(), [PTR, PTR, PTR, I64, real, real])


def passes(n: int) -> list[tuple[int, int, int]]:
    """(radix, length L, offset of its twiddles in the table) of each pass."""
    out, length, offset = [], n, 0
    for r in radices(n):
        out.append((r, length, offset))
        offset += 2 * (r - 1) * (length // r) * (length > r)
        length //= r
    return out


def twiddles(name: str) -> np.ndarray:
    """The table kernel `name` reads: for each pass with twiddles (m = L / r > 1), for k
    in 1..r-1, the m real parts then the m imaginary parts of w**(k*p), w =
    exp(-2j*pi/L); in float64, rounded once to the dtype."""
    n, real = _SYMBOL.fullmatch(name).groups()
    rows = []
    for r, length, _ in passes(int(n)):
        p = np.arange(length // r)
        for k in range(1, r if length > r else 1):
            w = np.exp(-2j * np.pi * ((k * p) % length) / length)
            rows += [w.real, w.imag]
    table = np.concatenate(rows) if rows else np.zeros(1)
    return np.ascontiguousarray(table, np.float32 if real == "f32" else np.float64)


def module_ir(name: str) -> str:
    """The LLVM IR of a module that defines the kernel `name` (a `symbol`) alone."""
    n, real = _SYMBOL.fullmatch(name).groups()
    module = ir.Module(name)
    fn = ir.Function(module, signature(REALS[real]), name)
    for a in fn.args[:3]:
        a.add_attribute("noalias")  # operand, result and scratch never overlap
    table = ir.GlobalVariable(module, REALS[real], table_symbol(name))  # external
    Kernel(fn, int(n), REALS[real], table).emit()
    return str(module)


class Kernel:
    """The body of one generated (forward) transform."""

    def __init__(self, fn: ir.Function, n: int, real: ir.Type, table: ir.Value):
        self.fn, self.n, self.real, self.table = fn, n, real, table
        self.b = ir.IRBuilder(fn.append_basic_block("entry"))
        self.sign = -1.0  # of the exponent of the twiddles

    def emit(self) -> None:
        src, dest, work, rows, scale, conj = self.fn.args
        n, b = self.n, self.b
        half = b.gep(work, [I64(2 * n)], source_etype=self.real)
        scratch = [self._split(work), self._split(half)]
        scale_im = b.fmul(scale, conj)

        def row(i):
            offset = b.mul(i, I64(2 * n))
            first = self._interleaved(b.gep(src, [offset], source_etype=self.real), None,
                                      conj)
            last = self._interleaved(b.gep(dest, [offset], source_etype=self.real), scale,
                                     scale_im)
            self._passes(first, last, scratch)

        self._range(rows, row)
        b.ret_void()

    def _split(self, base: ir.Value) -> Side:
        return Side(base, self.b.gep(base, [I64(self.n)], source_etype=self.real), 1)

    def _interleaved(self, base: ir.Value, re_factor, im_factor) -> Side:
        return Side(base, self.b.gep(base, [I64(1)], source_etype=self.real), 2, re_factor,
                    im_factor)

    def _passes(self, first: Side, last: Side, scratch: list[Side]) -> None:
        """Every pass of one transform: `first` to scratch, scratch to scratch (its two
        buffers in turn), scratch to `last`."""
        plan = passes(self.n)
        source, stride = first, 1
        for t, (r, length, offset) in enumerate(plan):
            target = last if t == len(plan) - 1 else scratch[t % 2]
            self._pass(r, length, stride, offset, source, target)
            source, stride = target, stride * r

    # ------------------------------------------------------------- one pass

    def _pass(self, r: int, length: int, s: int, offset: int, x: Side, y: Side) -> None:
        m = length // r

        def at_p(p):
            w = [self._load_twiddle(offset, k, m, p) for k in range(1, r)] if m > 1 else None

            def at_q(q):
                self._butterfly(r, m, s, x, y, p, q, w)

            if s == 1:
                at_q(I64(0))
            else:
                self._range(I64(s), at_q)

        self._range(I64(m), at_p)

    def _butterfly(self, r, m, s, x: Side, y: Side, p, q, w) -> None:
        b = self.b
        base = b.add(q, b.mul(p, I64(s)))
        v = [self._load(x, b.add(base, I64(k * m * s))) for k in range(r)]
        outs = {8: self._dft8, 4: self._dft4, 2: self._dft2}[r](v)
        out_base = b.add(q, b.mul(p, I64(r * s)))
        for k, z in enumerate(outs):
            if k and w:
                z = self._mul(z, w[k - 1])
            self._store(y, b.add(out_base, I64(k * s)), z)

    def _dft2(self, v: list) -> list:
        return [self._add(v[0], v[1]), self._sub(v[0], v[1])]

    def _dft8(self, v: list) -> list:
        """The 8-point DFT of v: radix 2 (v[j] +- v[j + 4], the difference times
        w8**j) to two 4-point DFTs, of the even outputs and of the odd ones."""
        even = [self._add(v[j], v[j + 4]) for j in range(4)]
        odd = [self._eighth(self._sub(v[j], v[j + 4]), j) for j in range(4)]
        return [z for pair in zip(self._dft4(even), self._dft4(odd)) for z in pair]

    def _eighth(self, z, j: int):
        """z * w8**j, w8 = exp(-2j*pi/8), by additions and sign changes (and one product
        by sqrt(1/2) for odd j), not by a general complex product."""
        b, half = self.b, self._c(np.sqrt(0.5))
        for _ in range(j // 2):  # times w8**2 = -i
            z = self._times_i(z, self.sign)
        if j % 2:  # times w8 = (1 - i) / sqrt(2)
            turned = self._times_i(z, self.sign)
            z = tuple(b.fmul(b.fadd(a, t), half) for a, t in zip(z, turned))
        return z

    def _times_i(self, z, sign: float):
        """z * (sign * i)."""
        return (self.b.fmul(z[1], self._c(-sign)), self.b.fmul(z[0], self._c(sign)))

    def _dft4(self, v: list) -> list:
        """The 4-point DFT of v: with a + c, a - c, b + d and -i (b - d)."""
        a, b_, c, d = v
        apc, amc, bpd, bmd = self._add(a, c), self._sub(a, c), self._add(b_, d), self._sub(b_, d)
        jbmd = self._times_i(bmd, self.sign)  # the twiddle of output 1 is -i
        return [self._add(apc, bpd), self._add(amc, jbmd), self._sub(apc, bpd),
                self._sub(amc, jbmd)]

    # ------------------------------------------------------------- complex registers

    def _add(self, x, y):
        return self.b.fadd(x[0], y[0]), self.b.fadd(x[1], y[1])

    def _sub(self, x, y):
        return self.b.fsub(x[0], y[0]), self.b.fsub(x[1], y[1])

    def _mul(self, x, y):
        b = self.b
        return (b.fsub(b.fmul(x[0], y[0]), b.fmul(x[1], y[1])),
                b.fadd(b.fmul(x[0], y[1]), b.fmul(x[1], y[0])))

    def _c(self, value: float) -> ir.Constant:
        return ir.Constant(self.real, value)

    # ------------------------------------------------------------- memory

    def _load(self, side: Side, i):
        b = self.b
        at = b.mul(i, I64(side.step)) if side.step != 1 else i
        z = (b.load(b.gep(part, [at], source_etype=self.real), typ=self.real)
             for part in (side.re, side.im))
        return tuple(self._times(v, f) for v, f in zip(z, (side.re_factor, side.im_factor)))

    def _store(self, side: Side, i, z) -> None:
        b = self.b
        at = b.mul(i, I64(side.step)) if side.step != 1 else i
        for part, v, f in zip((side.re, side.im), z, (side.re_factor, side.im_factor)):
            b.store(self._times(v, f), b.gep(part, [at], source_etype=self.real))

    def _times(self, v: ir.Value, factor: ir.Value | None) -> ir.Value:
        return v if factor is None else self.b.fmul(v, factor)

    def _load_twiddle(self, offset: int, k: int, m: int, p):
        """w**(k*p) of the pass whose twiddles start at `offset` of the table."""
        b = self.b
        return tuple(b.load(b.gep(self.table, [b.add(p, I64(offset + (2 * (k - 1) + part) * m))],
                                  source_etype=self.real), typ=self.real)
                     for part in (0, 1))

    # ------------------------------------------------------------- loops

    def _range(self, count: ir.Value, body) -> None:
        """for i in range(count): body(i), as a loop of phis LLVM vectorizes."""
        b = self.b
        pre = b.block
        head = self.fn.append_basic_block("fft.loop")
        done = self.fn.append_basic_block("fft.done")
        b.cbranch(b.icmp_signed(">", count, I64(0)), head, done)
        b.position_at_end(head)
        i = b.phi(I64)
        i.add_incoming(I64(0), pre)
        body(i)
        nxt = b.add(i, I64(1))
        i.add_incoming(nxt, b.block)
        b.cbranch(b.icmp_signed("<", nxt, count), head, done)
        b.position_at_end(done)
