"""x reduced by pi/2: x = q pi/2 + r, |r| <= pi/4 (a hair more), r as hi + lo.

|lo| is at most ulp(hi)/2 + 2^-76 (n P2's rounding error and n P3 below 2^30), more than
ulp(hi) only where hi is tiny; sin and cos of hi + lo need no more (hi + lo to first
order in lo, whose square is negligible), and tan's division normalizes the sums it
divides.

Two methods, selected per element (the second runs only if some element of the register
needs it):

- **Cody–Waite** (Cody & Waite, "Software Manual for the Elementary Functions", 1980;
  Muller, "Elementary Functions", 3rd ed., 2016, ch. 11) for |x| < 2^30: pi/2 as
  three doubles P1 + P2 + P3 (161 bits); x - n P1 is exact in one fused multiply-add
  (it is a multiple of P1's last place, and small), n P2 is taken exactly (a product and
  its error) and subtracted with Fast2Sum (exact here whatever the order: _exact_here),
  so r keeps about 100 correct bits: enough for the closest a double below 2^30 comes to
  a multiple of pi/2.
- **Payne–Hanek** (Payne & Hanek, "Radian reduction for trigonometric functions", SIGNUM
  Newsletter 18, 1983; Muller, ch. 11) for larger |x|, up to the largest double: the
  bits of 2/pi that matter for x = M 2^E (M an integer of 53 bits) start near bit E (the
  earlier ones make x 2/pi a multiple of 4, which does not change sin or cos); four
  48-bit pieces of them (192 bits), read from a table at an offset that is a multiple of
  8 bits, multiply x exactly (products and their errors); the pieces' integer parts
  are removed exactly, and the fraction summed by 2Sum from the largest part down keeps
  about 120 bits, which the closest a double comes to a multiple of pi/2 (2^-61, the
  worst case, at 6381956970095103 2^797, Muller ch. 11) needs.

NaN and ±inf reduce to NaN.
"""

from __future__ import annotations

from typing import NamedTuple

import llvmlite.ir as ir

from .. import arith as A
from ..emit import F64, I1, I64, mark_pure
from . import kit, tables
from .kit import fast_two_sum, fma, two_prod, two_sum, without_tiny

BOUND = 2.0 ** 30  # Cody–Waite below, Payne–Hanek from here on
TWO_OVER_PI = 0.6366197723675814
PIO2 = (1.5707963267948966, 6.123233995736766e-17, -1.4973849048591698e-33)  # pi/2 in 3 parts
ROUND = 1.5 * 2.0 ** 52  # adding it rounds |v| < 2^51 to an integer, held in the low bits

# TABLE[j + LEAD] = bits 8j+1 .. 8j+48 of 2/pi over 2^48, bits before the point being 0
# (tools/minimax_trig.py); LEAD entries start before the point for x down to 2^30
LEAD = 3
PIECES = 4  # 48-bit pieces, each 6 entries after the previous
TABLE = (
    3.794549385816026e-08, 9.714046818487532e-06, 0.00248679598580992,
    0.636619772367581, 0.9746617261008232, 0.5134018818108963, 0.4308817435903478,
    0.3057263591291779, 0.26594793706984987, 0.08267188988230956, 0.16400380987211705,
    0.9849753272621484, 0.15368377911078213, 0.3430474523609064, 0.8201478043928141,
    0.9578379245607564, 0.20650868755418017, 0.8662240138706672, 0.7533475508910072,
    0.8569730280980927, 0.3850951931122495, 0.5843694367361003, 0.5985758044425822,
    0.23540593730132642, 0.2639199491399147, 0.5635069798187651, 0.2577868336046478,
    0.9934294027905075, 0.3179271143706224, 0.38934127887967307, 0.6713673931969559,
    0.8700526584208461, 0.7334805557369961, 0.77102226867121, 0.3817007798300054,
    0.7153996364816528, 0.14230693930387162, 0.43057646179192943, 0.227574218733956,
    0.2589999958929958, 0.3039989486070951, 0.8237308434171737, 0.875095914796507,
    0.024554187906520752, 0.2858721040698313, 0.1832586418769182, 0.9142123204919628,
    0.03835404594257241, 0.8186357612993724, 0.5707548926394423, 0.11325251569786943,
    0.992644018654719, 0.11686877560864772, 0.9184065558140375, 0.11207828839442868,
    0.6920418289742045, 0.1627082173965455, 0.6533036535165202, 0.24573530022933454,
    0.9082368587103069, 0.5086358298388092, 0.21077243873561713, 0.9577443163188128,
    0.18254497761664368, 0.7315142698611794, 0.2676530844620615, 0.5191896222883798,
    0.9125433058255759, 0.611086291347867, 0.438090585054173, 0.15118977386848442,
    0.7045821103325274, 0.3730202451277691, 0.4931827527090924, 0.2547846935281193,
    0.2248815431988298, 0.5696750589006321, 0.8368150785626796, 0.22466011204652148,
    0.5129886839099669, 0.3251030809518589, 0.22638872367637575, 0.9555132611528627,
    0.6113948551337423, 0.5170829142381592, 0.3732260449689697, 0.5458675120563576,
    0.7420830864284369, 0.9732701256803828, 0.1571521741789148, 0.23095658980297884,
    0.1248869895626008, 0.9710693280263456, 0.5937479747445273, 0.9994815345998482,
    0.8672728575613142, 0.02185153569650211, 0.5939931383050343, 0.06224340608910239,
    0.9343119588102482, 0.1838614554239264, 0.06853258852526878, 0.5443426624691945,
    0.35172159211398224, 0.04072758117990105, 0.4262607820554045, 0.12276020618369543,
    0.42661278302675143, 0.212872454848398, 0.49534844119054, 0.8092009447785209,
    0.15544186330159704, 0.7931170052090657, 0.037953333521180355, 0.7160533814227321,
    0.3096656442197592, 0.2744049202591796, 0.2476595863501423, 0.4008541056368422,
    0.6186510430317433, 0.3746670161269563, 0.9147561285015193, 0.1775688963897828,
    0.45763747578520864, 0.15519380101426705, 0.7296130596528023, 0.7809432711176107,
    0.9214774061083766, 0.8982159637446081, 0.943286718620552, 0.4813999668618081,
    0.23839151662316027, 0.028228255529548107, 0.22643341556514684, 0.9669543846779725,
    0.5403224775618405, 0.322554255831502, 0.5738894928651384, 0.915710173475528,
    0.42180440973566036, 0.9819288923293819, 0.3737964363217827, 0.6918876983766822,
    0.12325078443064896, 0.5522008142463051, 0.36340844705434705, 0.032562445913740135)


class Reduced(NamedTuple):
    quadrant: ir.Value  # integers (i64) whose low two bits are q mod 4
    hi: ir.Value
    lo: ir.Value


def reduce_pio2(b: ir.IRBuilder, x: ir.Value, short: bool = False) -> Reduced:
    """x = q pi/2 + hi + lo, for a double register x (scalar or vector). Payne–Hanek's
    code runs only where some lane needs it: a branch per register (outlined.py). `short`:
    for float32's x (24 bits), where hi alone is accurate enough and lo is 0 below 2^30."""
    small = (_cody_waite_short if short else _cody_waite)(b, x)
    # BOUND <= |x| < inf: |x|'s bits less BOUND's below inf's less BOUND's, unsigned (one
    # comparison); ±inf and NaN take Cody–Waite's NaN, not the slow path
    i64 = A.like(x.type, I64)
    bound = kit.bits(BOUND)
    above = b.sub(b.bitcast(A.intrinsic(b, "fabs", x), i64), A.constant(i64, bound))
    huge = b.icmp_unsigned("<", above, A.constant(i64, kit.bits(float("inf")) - bound))
    any_huge = huge if A.lanes(x.type) is None else A.intrinsic(b, "vector.reduce.or", huge,
                                                                 ret=I1)
    start = b.block
    slow = b.append_basic_block("payne_hanek")
    join = b.append_basic_block("reduced")
    b.cbranch(any_huge, slow, join)
    b.position_at_end(slow)
    mixed = [b.select(huge, h, s) for h, s in zip(_payne_hanek_lanes(b, x), small)]
    end = b.block
    b.branch(join)
    b.position_at_end(join)
    out = []
    for fast, slow_value in zip(small, mixed):
        phi = b.phi(fast.type)
        phi.add_incoming(fast, start)
        phi.add_incoming(slow_value, end)
        out.append(phi)
    return Reduced(*out)


def _rounded(b: ir.IRBuilder, v: ir.Value, factor: ir.Value | None = None
             ) -> tuple[ir.Value, ir.Value]:
    """v (or v factor, not rounded first: one operation less on the kernel's longest
    chain) rounded to an integer (|v| < 2^51), as a double and as bits whose low bits
    are that integer's (two's complement): no conversion, defined for any v."""
    magic = A.const_like(v, ROUND)
    t = b.fadd(v, magic) if factor is None else fma(b, v, factor, magic)
    return b.fsub(t, magic), b.bitcast(t, A.like(v.type, I64))


# _exact_here: Fast2Sum(a, b) is exact where a is a multiple of ulp(b), whatever their
# order. Here b = -t, |t| < 1, so ulp(b) divides 2^-53, and a = r1 = x - n P1 is a
# multiple of 2^-53 where n != 0 (|x| > 3/4 there; P1's last place is 2^-52); b is 0
# where n is. Where |a| >= |b| it is Dekker's case. Else |a + b| < 2|b|: a + b is a
# multiple of ulp(b), so is s (a + b rounded), and |s - a| <= |b| + ulp(b) <= 2^53
# ulp(b): s - a is exact, and b - (s - a) is the addition's rounding error, exact too.
def _cody_waite(b: ir.IRBuilder, x: ir.Value) -> Reduced:
    """A subnormal x reduced as 0 (its sin and tan are x, kept by trig.py; its cos 1): the
    arithmetic sees no subnormal (kit.without_tiny). Here, not before the slow path's
    call, so that no more values live across it (a spill in every call: 10 % slower)."""
    x = without_tiny(b, x)[1]
    c = lambda value: A.const_like(x, value)  # noqa: E731
    n, q = _rounded(b, x, c(TWO_OVER_PI))
    minus_n = b.fneg(n)
    r1 = fma(b, minus_n, c(PIO2[0]), x)  # exact
    t, t_err = two_prod(b, n, c(PIO2[1]))
    r2, e = fast_two_sum(b, r1, b.fneg(t))  # exact though |r1| < |t| may be: _exact_here
    return Reduced(q, r2, fma(b, minus_n, c(PIO2[2]), b.fsub(e, t_err)))


def _cody_waite_short(b: ir.IRBuilder, x: ir.Value) -> Reduced:
    """x - n (P1 + P2) for x of 24 bits below 2^30: the first step is exact, the second
    rounded once, which leaves 2^-50 of r at worst (the closest such x comes to a multiple
    of pi/2 is far above n 2^-107)."""
    c = lambda value: A.const_like(x, value)  # noqa: E731
    n, q = _rounded(b, b.fmul(x, c(TWO_OVER_PI)))
    minus_n = b.fneg(n)
    r = fma(b, minus_n, c(PIO2[1]), fma(b, minus_n, c(PIO2[0]), x))
    return Reduced(q, r, c(-0.0))


def _payne_hanek_lanes(b: ir.IRBuilder, x: ir.Value) -> Reduced:
    """Payne–Hanek of x's lanes: a call of the module's function for x's type, defined
    once (the slow path stays out of the kernels, which then save no registers)."""
    fn = _payne_hanek_function(b.module, x.type)
    out = b.call(fn, [x])
    return Reduced(*(b.extract_value(out, i) for i in range(3)))


def _payne_hanek_function(module: ir.Module, t: ir.Type) -> ir.Function:
    """rune_payne_hanek_<type>: x -> (q, hi, lo); a vector's lanes at once, its table
    read by gathers (tables.lookup): a lane at a time took 15 ns an element, float32's
    arguments above 2^30 more than JAX's time (bench/math_ranges.py)."""
    name = f"rune_payne_hanek_{A.suffix(t)}"
    fn = module.globals.get(name)
    if fn is not None:
        return fn
    fn = ir.Function(module, ir.FunctionType(
        ir.LiteralStructType([A.like(t, I64), t, t]), [t]), name)
    fn.linkage = "internal"
    mark_pure(fn)
    set.add(fn.attributes, "noinline")
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    x = fn.args[0]
    parts = _payne_hanek(b, x)
    out = ir.Constant(fn.ftype.return_type, ir.Undefined)
    for i, v in enumerate(parts):
        out = b.insert_value(out, v, i)
    b.ret(out)
    return fn


def _payne_hanek(b: ir.IRBuilder, x: ir.Value) -> Reduced:
    """x 2/pi mod 4 = k + f, |f| <= 1/2 (a hair more), then r = f pi/2. With j the table
    offset (8j <= E - 2: the bits before 8j make multiples of 4) and X = x 2^-8j, of at
    most 62 bits, the product of X and piece i is below 2^(62 - 48 i); those of pieces 0
    and 1 are reduced mod 4 exactly (their last bits are no finer than 2^-46, of piece 0,
    and 53 bits under their lead, of piece 1)."""
    c = lambda value: A.const_like(x, value)  # noqa: E731
    i64 = A.like(x.type, I64)
    exponent = b.and_(b.lshr(b.bitcast(x, i64), A.constant(i64, 52)), A.constant(i64, 0x7FF))
    j = b.ashr(b.sub(exponent, A.constant(i64, 1075 + 2)), A.constant(i64, 3))
    j = b.select(b.icmp_signed("<", j, A.constant(i64, -LEAD)), A.constant(i64, -LEAD), j)
    scale = b.bitcast(b.shl(b.sub(A.constant(i64, 1023), b.shl(j, A.constant(i64, 3))),
                            A.constant(i64, 52)), x.type)
    big = b.fmul(x, scale)  # X = x 2^-8j, exact
    table = _table(b.module)
    pieces = [b.fmul(tables.lookup(b, table, b.add(j, A.constant(i64, LEAD + 6 * i))),
                     c(2.0 ** (-48 * i))) for i in range(PIECES)]
    p0, p0_err = two_prod(b, big, pieces[0])
    p1, p1_err = two_prod(b, big, pieces[1])
    p2, p2_err = two_prod(b, big, pieces[2])
    p3 = b.fmul(big, pieces[3])
    top = b.fadd(_mod4(b, p0), _mod4(b, p0_err))  # exact: multiples of 2^-46 below 4
    p1 = _mod4(b, p1)
    k, q = _rounded(b, b.fadd(top, p1))
    t, t_err = two_sum(b, b.fsub(top, k), p1)  # top - k is exact
    u, u_err = two_sum(b, t, p2)
    v, v_err = two_sum(b, u, p1_err)
    rest = b.fadd(b.fadd(b.fadd(t_err, u_err), b.fadd(v_err, p2_err)), p3)
    f, f_err = fast_two_sum(b, v, rest)
    hi = b.fmul(f, c(PIO2[0]))
    lo = fma(b, f_err, c(PIO2[0]), fma(b, f, c(PIO2[1]), fma(b, f, c(PIO2[0]), b.fneg(hi))))
    return Reduced(q, hi, lo)


def _mod4(b: ir.IRBuilder, v: ir.Value) -> ir.Value:
    """v - 4 round(v / 4), exact."""
    k = A.intrinsic(b, "rint", b.fmul(v, A.const_like(v, 0.25)))
    return fma(b, k, A.const_like(v, -4.0), v)


def _table(module: ir.Module) -> ir.GlobalVariable:
    """The module's 2/pi table, defined once."""
    return tables.table(module, "rune_two_over_pi", F64, TABLE)
