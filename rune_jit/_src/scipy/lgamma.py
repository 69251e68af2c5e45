"""gammaln (log |Γ(x)|) in float64, for rune_jit.scipy.special.gammaln: pieces of series
and one recurrence, summed in double-double arithmetic (double_double.py) and rounded
once, in the layout of fdlibm's e_lgamma_r (Taylor pieces around 1, 1.5, 2, 2.5 and 3,
the recurrence down to [2, 3) and Stirling's series past 10). docs/accuracy.md has the
method's references and the measured errors.

    >>> import numpy as np
    >>> print(gammaln(np.array([0.5, 3.0, 12.5])).round(12).tolist())
    [0.572364942925, 0.69314718056, 18.734347511936]
"""

from __future__ import annotations

import math
from decimal import Decimal
from typing import Any

import numpy as np

from .. import numpy as rnp
from ..ops import elementwise as ew
from .double_double import centered, fma_horner, log_dd, two_prod, two_sum


def _zeta(k: int) -> float:
    """Riemann's zeta at an integer k >= 2 (Euler-Maclaurin, exact to double precision)."""
    n = 30  # the first term left out, B12/12! k..(k+10) n^(-k-11), is 2^-65 at k = 2
    head = math.fsum(j ** -k for j in range(1, n))
    corr = [1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66]  # B2, B4, ..., B10
    tail = n ** (1 - k) / (k - 1) + 0.5 * n ** -k
    rising = k
    for i, bern in enumerate(corr):
        j = 2 * i + 2
        tail += bern / math.factorial(j) * rising * n ** (-k - j + 1)
        rising *= (k + j - 1) * (k + j)
    return head + tail


def _split(value: Decimal) -> tuple[float, float]:
    hi = float(value)
    return hi, float(value - Decimal(hi))


EULER, EULER_LO = _split(Decimal("0.57721566490153286060651209008240243104"))
LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)
# log(sqrt(2 pi)) - 1/2, Stirling's constant term in (z - 1/2)(log z - 1) + W + ...
STIRLING_W = _split(Decimal("0.41893853320467274178032973640561763986"))
LOG_PI = math.log(math.pi)
# lgamma(1 + z) = -γ z + sum_{k>=2} (-1)^k ζ(k) z^k / k, for |z| <= 1/4 (A&S 6.1.33)
LGAMMA_SERIES = [(-1) ** k * _zeta(k) / k for k in range(2, 31)]
BERNOULLI = [1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6]  # B2 .. B14
STIRLING = [b / (2 * k * (2 * k - 1)) for k, b in enumerate(BERNOULLI, 1)]
TINY = 2.0 ** -60  # below, gammaln and digamma are their first terms (to 2^-60 relative)
SHIFT = 10  # from here Stirling's series; below, the recurrence down to [2, 3)
LGAMMA_CENTERS = (  # tools/taylor_special.py: next term 2^-60.4 relative
    ((-0.12078223763524522, -4.1797047492946264e-18), (0.03648997397857652, 1.9534229894802305e-19),
     (6.07540647448469e-06, -9.547151192148187e-06, 1.5036983408359218e-05,
      -2.3743185469209343e-05, 3.759490926961219e-05, -5.97136233623377e-05,
      9.517939662502588e-05, -0.00015231593814270082, 0.0002448711904829441,
      -0.00039577153964650777, 0.0006437029830381486, -0.001054915693867632,
      0.00174503557579013, -0.002920970458667952, 0.004965728809475818,
      -0.008622603929171286, 0.0154354841700493, -0.028952081888893543, 0.05871212641676822,
      -0.13813277403905333, 0.46740110027233966)),
    ((0.0, 0.0), (0.42278433509846713, 4.942915152430645e-18),
     (1.0838659214896955e-08, -2.2711094608943164e-08, 4.7698101693639804e-08,
      -1.0043224823968099e-07, 2.1207184805554665e-07, -4.492469198764566e-07,
      9.55141213040742e-07, -2.039215753801366e-06, 4.374866789907488e-06,
      -9.439488275268397e-06, 2.050721277567069e-05, -4.492623673813314e-05,
      9.945751278180853e-05, -0.00022315475845357939, 0.0005096695247430425,
      -0.001192753911703261, 0.0028905103307415234, -0.007385551028673986,
      0.020580808427784546, -0.0673523010531981, 0.3224670334241132)),
    ((0.2846828704729192, -2.0938630583071727e-17), (0.7031566406452432, -4.430586970323463e-18),
     (8.00134398917395e-11, -2.0961050636200893e-10, 5.504172733427072e-10,
      -1.4491674948039224e-09, 3.8267918975072416e-09, -1.013942714378941e-08,
      2.6969103310573714e-08, -7.20541079563325e-08, 1.93519712819065e-07,
      -5.229945563057534e-07, 1.4240972665702957e-06, -3.9138807868675094e-06,
      1.088258420686863e-05, -3.071547269584968e-05, 8.842352064789512e-05,
      -0.0002615091483234197, 0.0008035683035655326, -0.0026146333292227614,
      0.009329410367385502, -0.0393673419402879, 0.24517887805011743)),
    ((0.6931471805599453, 2.3190468138462996e-17), (0.9227843350984671, 4.942915152430645e-18),
     (1.4510739168404548e-12, -4.563265937212529e-12, 1.4385873327305658e-11,
      -4.54780916546803e-11, 1.4422218749110315e-10, -4.5900627351542783e-10,
      1.4668966344919833e-09, -4.710545468032904e-09, 1.5212772050344947e-08,
      -4.946423680685744e-08, 1.6216069233735823e-07, -5.370321926785962e-07,
      1.8012627818085338e-06, -6.140869564690491e-06, 2.1388274743042423e-05,
      -7.66824831318324e-05, 0.0002863436640748566, -0.0011355510286739853,
      0.004955808427784548, -0.025685634386531427, 0.19746703342411323)),
)


def _where(c, x, y):
    return rnp.where(c, x, y)


def lgamma_one(z: Any) -> tuple[Any, Any]:
    """lgamma(1 + z) as hi + lo for |z| <= 1/4: -γ z + z² H(z), γ z exact (TwoProd)."""
    hi, err = two_prod(z, np.float64(-EULER))
    return hi, err - z * EULER_LO + z * (z * fma_horner(z, LGAMMA_SERIES[::-1]))


def _recurrence_product(y: Any, n: Any) -> tuple[Any, Any]:
    """y (y + 1) ... (y + n - 1) as hi + lo (each factor exact, each product's error
    from TwoProd), for n = 0 .. SHIFT - 3."""
    hi, lo = 1.0 + 0.0 * y, 0.0 * y
    for k in range(SHIFT - 3):
        factor = _where(k < n, y + k, 1.0)
        hi, err = two_prod(hi, factor)
        lo = ew.fma(lo, factor, err)
    return hi, lo


def _stirling(z: Any, log_hi: Any, log_lo: Any) -> Any:
    """lgamma(z) for z >= SHIFT: (z - 1/2)(log z - 1) + W + Σ B2k / (2k(2k-1) z^(2k-1))
    (A&S 6.1.41), log z a double-double, z (log z - 1) exact (TwoProd), rounded once."""
    m_hi, m_err = two_sum(log_hi, np.float64(-1.0))
    m_lo = m_err + log_lo
    # z 2^-600 (exact) in the product: the eager fma's splitting would overflow past 1e300
    p_hi, p_err = two_prod(z * 2.0 ** -600, m_hi)
    p_hi, p_err = p_hi * 2.0 ** 600, p_err * 2.0 ** 600
    series = fma_horner(1.0 / (z * z), STIRLING[::-1]) / z
    rest = (p_err + z * m_lo) - 0.5 * m_hi + (STIRLING_W[0] + (STIRLING_W[1] - 0.5 * m_lo
                                                                + series))
    return _where(p_hi == np.inf, p_hi, p_hi + rest)  # past 2.55e305 (p_err is NaN there)


def sinpi_abs(x: Any) -> Any:
    """|sin(pi x)|, reduced exactly first (x - rint(x) has no rounding error)."""
    return rnp.abs(rnp.sin(math.pi * (x - rnp.rint(x))))


def gammaln(x: Any) -> Any:
    """log |Γ(x)| of float64 x, SciPy's special values (+inf at the poles and +inf, -inf
    at -inf). |x| < 1/4 and [1/4, 3/4): lgamma(1 + x) - log|x|; reflected below -1/4:
    log(pi / |sin(pi x)|) - lgamma(1 - x) (A&S 6.1.17); the rest from `_positive`."""
    ax = rnp.abs(x)
    low = (ax < 0.25) | ((x >= 0.25) & (x < 0.75))
    refl = (x < 0) & ~low
    y = _where(refl, 1.0 - x, _where(low, 2.0, x))
    small = ax < 0.25
    log_arg = _where(low, _where(ax < TINY, 1.0, ax), y)
    pos = _positive(x, y, small, low, log_arg)
    s = sinpi_abs(_where(refl, x, 0.5))
    out = _where(refl, (LOG_PI - rnp.log(s)) - pos, pos)
    # below TINY gammaln = -log|x| - γx: sin(pi x) would lose digits to underflow
    out = _where(ax < TINY, -rnp.log(ax), out)
    # inf at the poles and at inf; -inf at -inf, as SciPy's (|Γ| falls to 0 between poles)
    out = _where((refl & (rnp.rint(x) == x)) | (x == np.inf), np.inf, out)
    return _where(x == -np.inf, -np.inf, _where(rnp.isnan(x), x, out))


def _positive(x, y, small, low, log_arg):
    """lgamma(y) for y >= 3/4 (and lgamma(1 + x) - log|x| in the `low` lanes): the series
    around 1 on [3/4, 5/4], the pieces around 1.5 .. 3 to 3.25, then the recurrence
    lgamma(y) = lgamma(y - n) + log(y - n) ... (y - 1) from [2, 3) (the product and its
    log double-doubles), Stirling's series from SHIFT."""
    one = ~low & (rnp.abs(y - 1.0) <= 0.25)
    pieces = ~low & ~one & (y < SHIFT)
    reduce = pieces & (y >= 3.25)
    n = _where(reduce, rnp.floor(y) - 2.0, 0.0)
    yr = y - n  # exact: the same binade's multiples or finer
    g1_hi, g1_lo = lgamma_one(_where(small, x, _where(one, y - 1.0, 0.0)))
    center = _where(low, 1.5, _where(pieces, rnp.rint(2.0 * yr) * 0.5, 2.0))
    t = _where(low, x - 0.5, _where(pieces, yr - center, 0.0))  # exact (Sterbenz)
    gc_hi, gc_lo = centered(2.0 * center - 3.0, t, LGAMMA_CENTERS)
    p_hi, p_lo = _recurrence_product(yr, n)
    l_hi, l_lo = log_dd(_where(reduce, p_hi, log_arg))
    # lgamma(c + t) or lgamma(1 + z), plus or minus a logarithm, rounded once
    a_hi = _where(small | one, g1_hi, gc_hi)
    a_lo = _where(small | one, g1_lo, gc_lo)
    b_hi = _where(low, -l_hi, _where(reduce, l_hi, 0.0))
    b_lo = _where(low, -l_lo, _where(reduce, l_lo + p_lo / p_hi, 0.0))
    hi, err = two_sum(a_hi, b_hi)
    near = hi + (err + (a_lo + b_lo)) + 0.0  # +0 (not -0) at 1 and 2
    return _where(low | (y < SHIFT), near, _stirling(y, l_hi, l_lo))
