"""rune_jit.lax's contractions: dot, dot_general, Precision, and the convolutions
(conv_general_dilated, conv, conv_with_general_padding, conv_transpose, the dimension
numbers and shape helpers), against NumPy loops and, where installed, jax.lax; eager,
jitted, differentiated (check_grads, JAX's gradients), batched and inside a scan."""

import itertools

import numpy as np
import pytest

import rune_jit as rune
import rune_jit.lax as lax
import rune_jit.numpy as rnp

RNG = np.random.default_rng(39)


def normal(*shape):
    return RNG.normal(size=shape)


@pytest.fixture
def jl():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    return jax.lax


# ------------------------------------------------------------- dot, dot_general

DOTS = {  # name: (lhs shape, rhs shape, dimension numbers)
    "matmul": ((3, 4), (4, 5), (((1,), (0,)), ((), ()))),
    "batched": ((2, 3, 4), (2, 4, 5), (((2,), (1,)), ((0,), (0,)))),
    "batch last": ((3, 4, 2), (4, 2, 5), (((1,), (0,)), ((2,), (1,)))),
    "two contracted": ((3, 4, 5), (5, 4), (((1, 2), (1, 0)), ((), ()))),
    "outer": ((3,), (2,), (((), ()), ((), ()))),
}


@pytest.mark.parametrize("name", DOTS)
def test_dot_general_matches_einsum(name):
    ls, rs, dims = DOTS[name]
    a, b = normal(*ls), normal(*rs)
    letters = iter("abcdefgh")
    sa, sb = [next(letters) for _ in ls], [next(letters) for _ in rs]
    (lc, rc), (lb, rb) = dims
    for i, j in zip(lc + lb, rc + rb):
        sb[j] = sa[i]
    free_a = [sa[i] for i in range(len(ls)) if i not in lc + lb]
    free_b = [sb[j] for j in range(len(rs)) if j not in rc + rb]
    spec = f"{''.join(sa)},{''.join(sb)}->{''.join([sa[i] for i in lb] + free_a + free_b)}"
    expected = np.einsum(spec, a, b)
    np.testing.assert_allclose(lax.dot_general(a, b, dims), expected, rtol=1e-12)
    np.testing.assert_allclose(rune.jit(lambda a, b: lax.dot_general(a, b, dims))(a, b),
                               expected, rtol=1e-12)


@pytest.mark.parametrize("name", ["batched", "two contracted"])
def test_dot_general_derivatives_and_vmap(name):
    ls, rs, dims = DOTS[name]
    a, b = normal(*ls), normal(*rs)
    rune.check_grads(lambda a, b: rnp.sum(rnp.sin(lax.dot_general(a, b, dims))), a, b)
    stacked = np.stack([a, 2 * a])
    out = rune.vmap(lambda a: lax.dot_general(a, b, dims))(stacked)
    np.testing.assert_allclose(out[1], lax.dot_general(2 * a, b, dims), rtol=1e-12)


def test_dot_general_inside_a_scan_step():
    w = normal(3, 3)
    xs = normal(4, 3)

    def run(w, xs):
        def step(h, x):
            h = rnp.tanh(lax.dot_general(w, h, (((1,), (0,)), ((), ()))) + x)
            return h, h
        return rune.scan(step, np.zeros(3), xs)[0]

    h = np.zeros(3)
    for x in xs:
        h = np.tanh(w @ h + x)
    np.testing.assert_allclose(run(w, xs), h, rtol=1e-12)
    np.testing.assert_allclose(rune.jit(run)(w, xs), h, rtol=1e-12)
    rune.check_grads(lambda w: rnp.sum(run(w, xs)), w)


def test_dot_shapes_dtypes_and_precision():
    a, v = normal(2, 3), normal(3)
    np.testing.assert_allclose(lax.dot(a, v), a @ v, rtol=1e-12)
    np.testing.assert_allclose(lax.dot(v, v, precision="highest"), v @ v, rtol=1e-12)
    for p in (lax.Precision.DEFAULT, "bfloat16", ("high", lax.Precision.HIGHEST), None):
        np.testing.assert_allclose(lax.dot(a, a.T, precision=p), a @ a.T, rtol=1e-12)
    ints = np.arange(3, dtype=np.int32)
    out = lax.dot(ints, ints, preferred_element_type=np.float64)
    assert out.dtype == np.float64 and out == 5.0
    assert lax.dot(ints, ints).dtype == np.int32
    assert lax.Precision("tensorfloat32") is lax.Precision.HIGH
    assert str(lax.Precision.HIGHEST) == "HIGHEST"


def test_dot_general_errors_name_both_shapes():
    with pytest.raises(TypeError, match=r"lhs of shape \(2, 3\) and rhs of shape \(4, 5\)"):
        lax.dot_general(np.ones((2, 3)), np.ones((4, 5)), (((1,), (0,)), ((), ())))
    with pytest.raises(TypeError, match="out of range.*shape \\(2, 3\\)"):
        lax.dot_general(np.ones((2, 3)), np.ones((3, 5)), (((2,), (0,)), ((), ())))
    with pytest.raises(TypeError, match="dimension_numbers must be"):
        lax.dot_general(np.ones(3), np.ones(3), ((0,), (0,)))
    with pytest.raises(ValueError, match="precision must be"):
        lax.dot(np.ones(3), np.ones(3), precision="exact")
    with pytest.raises(ValueError, match=r"1-d or 2-d.*\(2, 3, 4\)"):
        lax.dot(np.ones((2, 3, 4)), np.ones((4, 5)))


def test_dot_general_matches_jax(jl):
    for name, (ls, rs, dims) in DOTS.items():
        a, b = normal(*ls), normal(*rs)
        np.testing.assert_allclose(lax.dot_general(a, b, dims), jl.dot_general(a, b, dims),
                                   rtol=1e-12, err_msg=name)


# ------------------------------------------------------------- convolutions: NumPy oracle


def conv_reference(x, k, strides, pads, lhs_dil, rhs_dil, groups=1):
    """conv_general_dilated in (N, C, spatial...) / (O, I, spatial...) by loops."""
    n, c, *space = x.shape
    o, i, *kspace = k.shape
    grown = [(s - 1) * d + 1 for s, d in zip(space, lhs_dil)]
    dil = np.zeros((n, c, *grown))
    dil[(slice(None), slice(None), *(slice(None, None, d) for d in lhs_dil))] = x
    lo = [max(p, 0) for p, _ in pads]
    hi = [max(p, 0) for _, p in pads]
    padded = np.pad(dil, [(0, 0), (0, 0)] + list(zip(lo, hi)))
    padded = padded[(slice(None), slice(None), *(slice(-min(a, 0), padded.shape[2 + j] + min(b, 0))
                                                 for j, (a, b) in enumerate(pads)))]
    spans = [(w - 1) * d + 1 for w, d in zip(kspace, rhs_dil)]
    out_space = [(p - s) // st + 1 for p, s, st in zip(padded.shape[2:], spans, strides)]
    out = np.zeros((n, o, *out_space))
    og = o // groups
    for pos in itertools.product(*(range(m) for m in out_space)):
        window = padded[(slice(None), slice(None), *(
            slice(p * st, p * st + s, d) for p, st, s, d in zip(pos, strides, spans, rhs_dil)))]
        for g in range(groups):
            part = window[:, g * i:(g + 1) * i]
            kern = k[g * og:(g + 1) * og]
            out[(slice(None), slice(g * og, (g + 1) * og), *pos)] = np.tensordot(
                part, kern, (range(1, part.ndim), range(1, kern.ndim)))
    return out


CONVS = {  # name: (lhs shape, rhs shape, strides, pads, lhs_dilation, rhs_dilation, groups)
    "1-d strided": ((2, 3, 9), (4, 3, 3), (2,), [(1, 1)], (1,), (1,), 1),
    "2-d dilated": ((1, 2, 6, 5), (3, 2, 2, 3), (1, 2), [(1, 2), (0, 1)], (2, 1), (1, 2), 1),
    "2-d groups": ((2, 4, 5, 5), (6, 2, 3, 3), (1, 1), [(1, 1), (1, 1)], (1, 1), (1, 1), 2),
    "2-d negative pad": ((1, 2, 6, 6), (2, 2, 2, 2), (1, 1), [(-1, 1), (0, -2)], (1, 1),
                         (1, 1), 1),
    "3-d": ((1, 2, 4, 3, 4), (2, 2, 2, 2, 2), (1, 1, 2), [(0, 0), (1, 0), (0, 1)],
            (1, 1, 1), (1, 1, 1), 1),
}


@pytest.mark.parametrize("name", CONVS)
def test_conv_general_dilated_matches_loops(name):
    ls, rs, strides, pads, ld, rd, g = CONVS[name]
    x, k = normal(*ls), normal(*rs)
    out = lax.conv_general_dilated(x, k, strides, pads, ld, rd, feature_group_count=g)
    np.testing.assert_allclose(out, conv_reference(x, k, strides, pads, ld, rd, g),
                               rtol=1e-10, atol=1e-12)


def test_conv_layouts_jit_and_gradients():
    x, k = normal(2, 5, 6, 3), normal(3, 2, 3, 4)  # NHWC input, HWIO kernel
    dn = ("NHWC", "HWIO", "NCHW")

    def f(x, k):
        return lax.conv_general_dilated(x, k, (2, 1), "SAME", dimension_numbers=dn)

    expected = conv_reference(x.transpose(0, 3, 1, 2), k.transpose(3, 2, 0, 1), (2, 1),
                              lax.padtype_to_pads((5, 6), (3, 2), (2, 1), "SAME"),
                              (1, 1), (1, 1))
    np.testing.assert_allclose(f(x, k), expected, rtol=1e-10)
    np.testing.assert_allclose(rune.jit(f)(x, k), expected, rtol=1e-10)
    rune.check_grads(lambda x, k: rnp.sum(rnp.tanh(f(x, k))), x, k)


def test_conv_vmap_and_scan_step():
    k = normal(2, 2, 3)
    xs = normal(4, 1, 2, 7)
    conv = lambda x: lax.conv(x, k, (1,), "SAME")
    batched = rune.vmap(conv)(xs)
    for x, y in zip(xs, batched):
        np.testing.assert_allclose(y, conv(x), rtol=1e-12)

    def run(k):
        def step(h, x):
            h = rnp.tanh(lax.conv(x + h, k, (1,), "SAME"))
            return h, rnp.sum(h)
        return rune.scan(step, np.zeros((1, 2, 7)), xs)[1]

    h, sums = np.zeros((1, 2, 7)), []
    for x in xs:
        h = np.tanh(conv_reference(x + h, k, (1,), [(1, 1)], (1,), (1,)))
        sums.append(h.sum())
    np.testing.assert_allclose(rune.jit(run)(k), sums, rtol=1e-10)
    rune.check_grads(lambda k: rnp.sum(run(k)), k)


def test_conv_spellings_and_shape_helpers():
    x, k = normal(1, 2, 5, 5), normal(3, 2, 3, 3)
    np.testing.assert_allclose(lax.conv(x, k, (1, 1), "VALID"),
                               conv_reference(x, k, (1, 1), [(0, 0)] * 2, (1, 1), (1, 1)))
    np.testing.assert_allclose(
        lax.conv_with_general_padding(x, k, (1, 1), [(1, 0), (0, 1)], (1, 1), (2, 1)),
        conv_reference(x, k, (1, 1), [(1, 0), (0, 1)], (1, 1), (2, 1)), rtol=1e-10)
    assert lax.conv_shape_tuple((1, 2, 5, 5), (3, 2, 3, 3), (2, 2), "SAME") == (1, 3, 3, 3)
    assert lax.conv_general_shape_tuple((1, 5, 5, 2), (3, 3, 2, 4), (1, 1), "VALID",
                                        ("NHWC", "HWIO", "NHWC")) == (1, 3, 3, 4)
    dn = lax.conv_dimension_numbers((1, 5, 5, 2), (3, 3, 2, 4), ("NHWC", "HWIO", "NHWC"))
    assert dn == lax.ConvDimensionNumbers((0, 3, 1, 2), (3, 2, 0, 1), (0, 3, 1, 2))
    assert lax.conv_dimension_numbers((1, 2, 3), (1, 2, 3), dn) is dn
    assert lax.padtype_to_pads((5, 6), (3, 2), (2, 1), "SAME_LOWER") == [(1, 1), (1, 0)]


def test_conv_transpose_is_the_input_gradient_of_conv():
    x, k = normal(1, 8, 2), normal(3, 2, 4)  # NHC input, HIO kernel
    fwd = lambda x: lax.conv_general_dilated(
        x, k, (2,), "SAME", dimension_numbers=("NHC", "HIO", "NHC"))
    y = fwd(x)
    ct = normal(*y.shape)
    grad = rune.vjp(fwd, x)[1](ct)[0]
    # transpose_kernel makes conv_transpose the gradient, with the kernel in (H, O, I)
    back = lax.conv_transpose(ct, k, (2,), "SAME", dimension_numbers=("NHC", "HIO", "NHC"),
                              transpose_kernel=True)
    np.testing.assert_allclose(back, grad, rtol=1e-10)
    assert lax.conv_transpose_shape_tuple(ct.shape, k.shape, (2,), "SAME",
                                          ("NHC", "HOI", "NHC")) == (1, 8, 2)


def test_conv_errors():
    x, k = np.ones((1, 4, 5)), np.ones((2, 3, 2))
    with pytest.raises(TypeError, match=r"feature_group_count=1.*\(1, 4, 5\).*\(2, 3, 2\)"):
        lax.conv_general_dilated(x, k, (1,), "VALID")
    with pytest.raises(NotImplementedError, match="batch_group_count"):
        lax.conv_general_dilated(x, np.ones((2, 4, 2)), (1,), "VALID", batch_group_count=2)
    with pytest.raises(ValueError, match="padding must be one of"):
        lax.conv(x, np.ones((2, 4, 2)), (1,), "FULL")
    with pytest.raises(ValueError, match="lhs_dilation"):
        lax.conv_general_dilated(x, np.ones((2, 4, 2)), (1,), "SAME", lhs_dilation=(2,))
    with pytest.raises(TypeError, match="exactly once"):
        lax.conv_dimension_numbers((1, 2, 3), (1, 2, 3), ("NCC", "OIH", "NCH"))
    with pytest.raises(TypeError, match="window_strides must be 1 positive"):
        lax.conv(x, np.ones((2, 4, 2)), (1, 1), "VALID")


# ------------------------------------------------------------- convolutions: JAX

JAX_CONVS = [
    dict(ls=(2, 3, 7), rs=(4, 3, 3), kw=dict(window_strides=(2,), padding="SAME")),
    dict(ls=(2, 3, 7, 6), rs=(4, 3, 3, 2),
         kw=dict(window_strides=(1, 2), padding=((1, 2), (0, 1)), lhs_dilation=(2, 1),
                 rhs_dilation=(1, 2))),
    dict(ls=(2, 6, 6, 4), rs=(3, 3, 2, 4),
         kw=dict(window_strides=(1, 1), padding="SAME_LOWER", feature_group_count=2,
                 dimension_numbers=("NHWC", "HWIO", "NHWC"))),
    dict(ls=(1, 2, 4, 5, 3), rs=(3, 2, 2, 2, 2), kw=dict(window_strides=(1, 2, 1),
                                                          padding="VALID")),
]


@pytest.mark.parametrize("case", range(len(JAX_CONVS)))
def test_conv_general_dilated_and_gradients_match_jax(jl, case):
    import jax

    c = JAX_CONVS[case]
    x, k = normal(*c["ls"]), normal(*c["rs"])
    np.testing.assert_allclose(lax.conv_general_dilated(x, k, **c["kw"]),
                               jl.conv_general_dilated(x, k, **c["kw"]), rtol=1e-10)
    ours = rune.grad(lambda x, k: rnp.sum(lax.conv_general_dilated(x, k, **c["kw"]) ** 2),
                     argnums=(0, 1))(x, k)
    theirs = jax.grad(lambda x, k: (jl.conv_general_dilated(x, k, **c["kw"]) ** 2).sum(),
                      argnums=(0, 1))(x, k)
    for o, t in zip(ours, theirs):
        np.testing.assert_allclose(o, t, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("padding", ["SAME", "VALID", [(1, 2)]])
def test_conv_transpose_matches_jax(jl, padding):
    x, k = normal(1, 5, 3), normal(3, 3, 2)
    for transpose_kernel in (False, True):
        kern = k if not transpose_kernel else normal(3, 2, 3)
        np.testing.assert_allclose(
            lax.conv_transpose(x, kern, (2,), padding, transpose_kernel=transpose_kernel),
            jl.conv_transpose(x, kern, (2,), padding, transpose_kernel=transpose_kernel),
            rtol=1e-10)
    dn = ("NHC", "HIO", "NHC")
    assert (lax.conv_transpose_shape_tuple((1, 5, 3), (3, 3, 2), (2,), "SAME", dn)
            == tuple(jl.conv_transpose_shape_tuple((1, 5, 3), (3, 3, 2), (2,), "SAME", dn)))
