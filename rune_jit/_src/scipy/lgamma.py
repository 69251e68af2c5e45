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
# on (-NEAR, -1/4] the recurrence up to lgamma(1 + f), f = x - rint(x); below, the
# reflection (docs/accuracy.md: past -NEAR |gammaln| >= 9, the reflection's terms cancel
# by a few bits at most)
NEAR = 20
LOG_PI_DD = (1.1447298858494002, 1.0265951162707826e-17)
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
    from TwoProd), for n = 0 .. NEAR + 1."""
    hi, lo = 1.0 + 0.0 * y, 0.0 * y
    for k in range(NEAR + 1):
        factor = _where(k < n, y + k, 1.0)
        hi, err = two_prod(hi, factor)
        lo = ew.fma(lo, factor, err)
    return hi, lo


def _stirling(z: Any, log_hi: Any, log_lo: Any) -> tuple[Any, Any]:
    """lgamma(z) as hi + lo for z >= SHIFT: (z - 1/2)(log z - 1) + W + Σ B2k / (2k(2k-1)
    z^(2k-1)) (A&S 6.1.41), log z a double-double, z (log z - 1) exact (TwoProd)."""
    m_hi, m_err = two_sum(log_hi, np.float64(-1.0))
    m_lo = m_err + log_lo
    # z 2^-600 (exact) in the product: the eager fma's splitting would overflow past 1e300
    p_hi, p_err = two_prod(z * 2.0 ** -600, m_hi)
    p_hi, p_err = p_hi * 2.0 ** 600, p_err * 2.0 ** 600
    series = fma_horner(1.0 / (z * z), STIRLING[::-1]) / z
    rest = (p_err + z * m_lo) - 0.5 * m_hi + (STIRLING_W[0] + (STIRLING_W[1] - 0.5 * m_lo
                                                                + series))
    return p_hi, _where(p_hi == np.inf, 0.0, rest)  # past 2.55e305 (p_err is NaN there)


def sinpi_abs(x: Any) -> Any:
    """|sin(pi x)|, reduced exactly first (x - rint(x) has no rounding error)."""
    return rnp.abs(rnp.sin(math.pi * (x - rnp.rint(x))))


def gammaln(x: Any) -> Any:
    """log |Γ(x)| of float64 x, SciPy's special values (+inf at the poles and +inf, -inf
    at -inf). |x| < 1/4 and [1/4, 3/4): lgamma(1 + x) - log|x|; on (-NEAR, -1/4] the
    recurrence lgamma(1 + f) - log|x (x + 1) ... (x + m)|, f = x + m = x - rint(x);
    reflected below -NEAR: log(pi / |sin(pi x)|) - lgamma(1 - x) (A&S 6.1.17), 1 - x as
    hi + lo; the rest from `_positive`. All as double-doubles, rounded once."""
    ax = rnp.abs(x)
    low = (ax < 0.25) | ((x >= 0.25) & (x < 0.75))
    far = (x <= -NEAR)
    mid = (x < 0) & ~low & ~far
    y, y_err = two_sum(np.float64(1.0), -x)
    y = _where(far, y, _where(low | mid, 2.0, x))
    hi, lo, log_y = _positive(x, _where(mid, x - rnp.rint(x), x), y, low, mid)
    # far: log(pi) - log|sin(pi x)| - lgamma(1 - x), lgamma(y + y_err) = lgamma(y) +
    # y_err psi(y), psi(y) = log y - 1/(2y) to 2^-12 (|y_err psi(y)| < 2^-52 lgamma(y))
    s_hi, s_lo = log_dd(sinpi_abs(_where(far, x, 0.5)))
    r_hi, r_err = two_sum(np.float64(LOG_PI_DD[0]), -s_hi)
    r_hi, r_err2 = two_sum(r_hi, -hi)
    tail = (LOG_PI_DD[1] - s_lo) - (lo + _where(far, y_err, 0.0) * (log_y - 0.5 / y))
    out = _where(far, r_hi + (r_err + r_err2 + tail), hi + lo) + 0.0  # +0 (not -0) at 1, 2
    # below TINY gammaln = -log|x| - γx: sin(pi x) would lose digits to underflow
    out = _where(ax < TINY, -rnp.log(ax), out)
    # inf at the poles and at inf; -inf at -inf, as SciPy's (|Γ| falls to 0 between poles)
    out = _where(((x < 0) & (rnp.rint(x) == x)) | (x == np.inf), np.inf, out)
    return _where(x == -np.inf, -np.inf, _where(rnp.isnan(x), x, out))


def _positive(x, f, y, low, mid):
    """lgamma(y) for y >= 3/4 as hi + lo (and log y's hi for y >= SHIFT); in the `low` and
    `mid` lanes lgamma(1 + f) - log|x (x + 1) ... f| (f = x on `low`): the series around 1
    on [3/4, 5/4], the pieces around 1.5 .. 3 to 3.25 (lgamma(1 + f) for f < -1/4 as
    lgamma(2 + f) - log(1 + f)), then the recurrence lgamma(y) = lgamma(y - n) +
    log(y - n) ... (y - 1) from [2, 3) (the product and its log double-doubles),
    Stirling's series from SHIFT."""
    near = low | mid
    small = near & (rnp.abs(f) < 0.25)
    one = ~near & (rnp.abs(y - 1.0) <= 0.25)
    pieces = ~near & ~one & (y < SHIFT)
    reduce = pieces & (y >= 3.25)
    n = _where(reduce, rnp.floor(y) - 2.0, _where(mid, 1.0 - rnp.rint(x), 0.0))
    n = _where(low, 1.0, n)
    base = _where(near, x, y - n)  # exact: the same binade's multiples or finer
    g1_hi, g1_lo = lgamma_one(_where(small, f, _where(one, y - 1.0, 0.0)))
    center = _where(near, 1.5, _where(pieces, rnp.rint(2.0 * base) * 0.5, 2.0))
    # exact (Sterbenz): lgamma(1 + f) around 1.5 for f > 1/4, lgamma(2 + f) for f < -1/4
    t = _where(near, f - rnp.copysign(0.5, f), _where(pieces, base - center, 0.0))
    gc_hi, gc_lo = centered(2.0 * center - 3.0, t, LGAMMA_CENTERS)
    p_hi, p_lo = _recurrence_product(base, n)
    # the factor 1 + f of f < -1/4 (lgamma(1 + f) = lgamma(2 + f) - log(1 + f)), hi + lo
    u_hi, u_lo = two_sum(np.float64(1.0), _where(near & ~small & (f < 0), f, 0.0))
    q_hi, q_err = two_prod(p_hi, u_hi)
    p_lo = ew.fma(p_lo, u_hi, q_err) + p_hi * u_lo
    q_hi = _where(q_hi == 0.0, 1.0, q_hi)  # x = 0 (a pole)
    l_hi, l_lo = log_dd(_where(near | reduce, rnp.abs(q_hi), y))
    l_lo = _where(near | reduce, l_lo + p_lo / q_hi, l_lo)
    # lgamma(c + t) or lgamma(1 + z), plus or minus a logarithm
    a_hi = _where(small | one, g1_hi, gc_hi)
    a_lo = _where(small | one, g1_lo, gc_lo)
    b_hi = _where(near, -l_hi, _where(reduce, l_hi, 0.0))
    b_lo = _where(near, -l_lo, _where(reduce, l_lo, 0.0))
    hi, err = two_sum(a_hi, b_hi)
    s_hi, s_lo = _stirling(_where(y < SHIFT, SHIFT, y), l_hi, l_lo)
    stir = ~near & (y >= SHIFT)
    return _where(stir, s_hi, hi), _where(stir, s_lo, err + (a_lo + b_lo)), l_hi
