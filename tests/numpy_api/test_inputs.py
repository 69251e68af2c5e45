"""What rune_jit accepts as an argument (docs/inputs.md): ndarray subclasses are
rejected, array-likes converted, and a Python int that does not fit the dtype it meets
raises NumPy 2's OverflowError, eagerly and under jit, vmap, grad and loops."""

import os
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import rune_jit as rune
import rune_jit.numpy as rnp

pytestmark = pytest.mark.filterwarnings("ignore:the matrix subclass:PendingDeprecationWarning")


def raises(exc, *fragments):
    """A context asserting `exc` is raised with every fragment in its message."""
    return pytest.raises(exc, match="(?s)" + "".join(f"(?=.*{re.escape(f)})" for f in fragments))


def masked():
    return np.ma.masked_array([1.0, 2.0], mask=[0, 1])


class ArrayLike:
    """An object that is not an ndarray but converts to one, as a JAX array does."""

    def __init__(self, values):
        self.values = np.asarray(values)

    def __array__(self, dtype=None, copy=None):
        return self.values if dtype is None else self.values.astype(dtype)


class DLPackOnly:
    """An array API array that offers DLPack and nothing else."""

    def __init__(self, values):
        self.values = np.asarray(values)

    def __dlpack__(self, **kwargs):
        return self.values.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self.values.__dlpack_device__()


# ------------------------------------------------------------- ndarray subclasses

SUBCLASS = ["a subclass of numpy.ndarray", "does not accept"]

REJECTED = {
    "jit argument": (lambda m: rune.jit(lambda x: rnp.sum(x * 2))(m), "args[0]"),
    "jit keyword": (lambda m: rune.jit(lambda x, w: x * w)(1.0, w=m), "['w']"),
    "eager rnp.sum": (lambda m: rnp.sum(m), "rune_jit.numpy.sum"),
    "rnp.sum under jit (a constant)": (lambda m: rune.jit(lambda x: rnp.sum(x * m))(np.ones(2)),
                                       "rune_jit.numpy.multiply"),
    "traced * it": (lambda m: rune.vmap(lambda x: x * m)(np.ones((3, 2))),
                    "rune_jit.numpy.multiply"),
    "grad argument": (lambda m: rune.grad(lambda x: rnp.sum(x))(m), "argument 0"),
    "grad, nested": (lambda m: rune.grad(lambda x, d: rnp.sum(x * d["w"]), argnums=1)(
        np.ones(2), {"w": m}), "argument 1['w']"),
    "vmap argument": (lambda m: rune.vmap(lambda x, d: x * d["w"])(np.ones(2), {"w": m}),
                      "args[1]['w']"),
    "jvp primal": (lambda m: rune.jvp(lambda x: x, (m,), (np.ones(2),)), "primals[0]"),
    "vjp primal": (lambda m: rune.vjp(lambda x: x, m), "primals[0]"),
    "scan init": (lambda m: rune.scan(lambda c, x: (c + x, c), (m,), np.ones((3, 2))),
                  "init[0]"),
    "scan xs": (lambda m: rune.scan(lambda c, x: (c + x, c), np.zeros(2), {"a": m}),
                "xs['a']"),
    "iterate init": (lambda m: rune.iterate(lambda c: c * 2, [m], until=lambda c: True,
                                            max_steps=3), "init[0]"),
    "scan init under jit": (lambda m: rune.jit(lambda xs: rune.scan(
        lambda c, x: (c + x, c), m, xs))(np.ones((3, 2))), "init"),
}


@pytest.mark.parametrize("name", REJECTED)
@pytest.mark.parametrize("make", [masked, lambda: np.matrix([[1.0, 2.0]])],
                         ids=["masked", "matrix"])
def test_ndarray_subclasses_are_rejected(name, make):
    call, where = REJECTED[name]
    value = make()
    with raises(TypeError, where, type(value).__name__, *SUBCLASS):
        call(value)


def test_the_mask_is_never_silently_dropped():
    """The reported case: NumPy gives 2.0 (the masked 2.0 is left out), rune_jit gave 6.0."""
    m = masked()
    assert np.sum(m * 2) == 2.0
    for f in (rune.jit(lambda x: rnp.sum(x * 2)), lambda x: rnp.sum(x * 2)):
        with raises(TypeError, "MaskedArray"):
            f(m)
    # converting explicitly computes with the data, as np.asarray does
    assert rune.jit(lambda x: rnp.sum(x * 2))(np.asarray(m)) == 6.0


def test_a_subclass_of_a_subclass_is_rejected():
    class Tagged(np.ndarray):
        pass

    with raises(TypeError, "args[0]", "Tagged", *SUBCLASS):
        rune.jit(lambda x: x + 1)(np.zeros(3).view(Tagged))


def test_a_memmap_is_an_ndarray_whose_memory_is_a_file(tmp_path, backend):
    mm = np.memmap(tmp_path / "m.bin", dtype=np.float64, mode="w+", shape=(4,))
    mm[:] = [1.0, 2.0, 3.0, 4.0]
    f = backend(lambda x: rnp.sum(rnp.sin(x) * x))
    np.testing.assert_allclose(f(mm), np.sum(np.sin(mm) * mm), rtol=1e-12)
    np.testing.assert_allclose(rune.grad(lambda x: rnp.sum(x * x))(mm), 2 * np.asarray(mm))


# ------------------------------------------------------------- array-likes


@pytest.mark.parametrize("kind", [ArrayLike, DLPackOnly])
def test_array_likes_are_converted(kind, backend):
    values = np.array([1.0, 2.0, 3.0])
    xs = kind(values)
    # eager, the function gets the object itself: rune_jit.numpy takes it as NumPy would
    np.testing.assert_allclose(backend(lambda x: rnp.sum(rnp.multiply(x, 2)))(xs), 12.0)
    np.testing.assert_allclose(rnp.add(kind(values), 1.0), values + 1)
    np.testing.assert_allclose(backend(rune.grad(lambda x: rnp.sum(x * x)))(xs), 2 * values)
    np.testing.assert_allclose(backend(rune.vmap(lambda x, k: x * k, in_axes=(0, None)))(
        xs, kind(np.float64(3.0))), 3 * values)
    carry, ys = backend(lambda i, x: rune.scan(lambda c, r: (c + r, c), i, x))(
        kind(np.float64(0.0)), xs)
    assert carry == 6.0 and ys.tolist() == [0.0, 1.0, 3.0]
    out = rune.iterate(lambda c: c * 2, kind(np.float64(1.0)), until=lambda c: c > 10,
                       max_steps=10)
    assert out == 16.0
    primal, tangent = rune.jvp(lambda x: x * x, (xs,), (kind(np.ones(3)),))
    np.testing.assert_allclose(tangent, 2 * values)


def test_an_array_like_of_an_unsupported_dtype():
    for f in (rune.jit(lambda x: x * 2), rune.vmap(lambda x: x * 2)):
        with raises(TypeError, "args[0]", "dtype timedelta64[s] is not supported"):
            f(ArrayLike(np.array([1, 2], "timedelta64[s]")))
    with raises(TypeError, "rune_jit.numpy.sum", "dtype timedelta64[s] is not supported"):
        rnp.sum(ArrayLike(np.array([1], "timedelta64[s]")))


def test_what_is_no_array_is_still_rejected():
    for bad in ("s", object(), {1, 2}):
        with raises(TypeError, "args[0]", "not an array or a number"):
            rune.vmap(lambda x: x)(bad)


def test_python_lists_are_pytrees_as_before(backend):
    out = backend(lambda xs: xs[0] * xs[1])([np.float64(2.0), 3.0])
    assert out == 6.0
    assert rnp.sum([1.0, 2.0]) == 3.0  # rune_jit.numpy makes an array of a list, as NumPy


# ------------------------------------------------------------- NEP 50: Python ints that do not fit

I32 = np.int32
BIG = 2 ** 40
NUMPY_SAYS = f"Python integer {BIG} out of bounds for int32"


def test_numpy_raises_for_the_reported_cases():
    with raises(OverflowError, NUMPY_SAYS):
        np.ones(2, I32) + BIG
    with raises(OverflowError, "Python integer 2147483648 out of bounds for int32"):
        np.ones(2, I32) * 2 ** 31


ARGUMENT_CALLS = {
    "jit": lambda f, x, k: rune.jit(f)(x, k),
    "jit, keyword": lambda f, x, k: rune.jit(f)(x, k=k),
    "jit, in a dict": lambda f, x, k: rune.jit(lambda x, d: f(x, d["k"]))(x, {"k": k}),
    "vmap": lambda f, x, k: rune.vmap(f, in_axes=(0, None))(x, k),
    "jit of vmap": lambda f, x, k: rune.jit(rune.vmap(f, in_axes=(0, None)))(x, k),
    "vmap inside jit": lambda f, x, k: rune.jit(lambda x, k: rune.vmap(lambda r: f(r, k))(x))(
        x, k),
    "grad, not differentiated": lambda f, x, k: rune.grad(
        lambda w, k: rnp.sum(w * f(x, k)))(np.ones(x.shape), k),
    "jit of grad": lambda f, x, k: rune.jit(rune.grad(
        lambda w, k: rnp.sum(w * f(x, k))))(np.ones(x.shape), k),
    "grad of vmap": lambda f, x, k: rune.grad(lambda w, k: rnp.sum(
        w * rune.vmap(f, in_axes=(0, None))(x, k)))(np.ones(x.shape), k),
    "jvp": lambda f, x, k: rune.jvp(lambda w, k: w * f(x, k), (np.ones(x.shape), k),
                                    (np.ones(x.shape), 0))[0],
    "scan step, under jit": lambda f, x, k: rune.jit(lambda x, k: rune.scan(
        lambda c, r: (c, f(r, k)), 0.0, x)[1])(x, k),
    "scan step, eager": lambda f, x, k: rune.scan(lambda c, r: (c, f(r, k)), 0.0, x)[1],
    "scan in a scan, under vmap": lambda f, x, k: rune.vmap(lambda x, k: rune.scan(
        lambda c, r: (c, rune.scan(lambda d, s: (d, f(s, k)), 0, r[None])[1][0]), 0.0, x)[1],
        in_axes=(0, None))(x[None], k)[0],
    "iterate step, under jit": lambda f, x, k: rune.jit(lambda x, k: rune.iterate(
        lambda c: (c[0] + 1, f(x, k)), (0, x), until=lambda c: c[0] >= 1, max_steps=2)[1])(
        x, k),
    "literal, under vmap": lambda f, x, k: rune.vmap(lambda r: f(r, k))(x),
    "literal, under jit": lambda f, x, k: rune.jit(lambda x: f(x, k))(x),
}

OPS = {
    "add": lambda x, k: x + k,
    "mul": lambda x, k: x * k,
    "radd": lambda x, k: k + x,
    "maximum": lambda x, k: rnp.maximum(x, k),
    "floor_divide": lambda x, k: x // k,
    "computed from it": lambda x, k: x + (k * 2 - k),
}


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("call", ARGUMENT_CALLS)
def test_a_python_int_that_does_not_fit_raises_as_in_numpy(call, op):
    run, f = ARGUMENT_CALLS[call], OPS[op]
    x = np.array([3, 7], I32)
    with raises(OverflowError, NUMPY_SAYS):
        f(x, BIG)  # NumPy
    with raises(OverflowError, NUMPY_SAYS):
        run(f, x, BIG)
    np.testing.assert_array_equal(run(f, x, 5), f(x, 5))  # one that fits: as NumPy


@pytest.mark.parametrize("f", [rnp.add, rnp.multiply, rnp.maximum, rnp.floor_divide])
def test_eager_rune_jit_numpy_raises_as_numpy(f):
    x = np.array([3, 7], I32)
    for a, b in [(x, BIG), (BIG, x)]:
        with raises(OverflowError, NUMPY_SAYS):
            f(a, b)


@pytest.mark.parametrize("k", [2 ** 31, -2 ** 31 - 1, BIG, -BIG])
def test_just_out_of_bounds(k):
    f = rune.jit(lambda x, k: x * k)
    with raises(OverflowError, f"Python integer {k} out of bounds for int32"):
        f(np.ones(2, I32), k)


@pytest.mark.parametrize("k", [2 ** 31 - 1, -2 ** 31, 0])
def test_just_in_bounds_wraps_between_arrays_as_numpy(k, backend):
    x = np.array([1, 2, -3], I32)
    np.testing.assert_array_equal(backend(lambda x, k: x * k + x)(x, k), x * k + x)


def test_overflow_between_arrays_wraps(backend):
    a, b = np.array([2 ** 30, -2 ** 31, 7], I32), np.array([4, 2, 3], I32)
    with np.errstate(over="ignore"):
        expected = a * b + a
    np.testing.assert_array_equal(backend(lambda a, b: a * b + a)(a, b), expected)


def test_a_jitted_function_checks_every_call():
    f = rune.jit(lambda x, k: x + k)
    x = np.ones(2, I32)
    assert f(x, 3).tolist() == [4, 4]
    with raises(OverflowError, NUMPY_SAYS):
        f(x, BIG)
    assert f(x, -4).tolist() == [-3, -3]
    with raises(OverflowError, "Python integer -2147483649 out of bounds for int32"):
        f(x, -2 ** 31 - 1)


@pytest.mark.parametrize("dtype", [np.int64, np.float32, np.float64])
def test_a_dtype_it_fits_takes_it(dtype, backend):
    x = np.arange(3, dtype=dtype)
    out = backend(lambda x, k: x + k)(x, BIG)
    assert out.dtype == dtype
    np.testing.assert_array_equal(out, x + BIG)


def test_calls_with_arrays_only_carry_no_checks():
    f = rune.jit(lambda x, k: x + k)
    x = np.ones(2, I32)
    f(x, x), f(x, 3), f(x, np.int64(3))  # an np.int64 is strong: int64 result, no check
    weak = {tuple(w for _, _, w in spec): p.checks is not None
            for (_, spec, *_), p in f.cache.items()}
    assert weak == {(False, False): False, (False, True): True}


def test_a_saved_program_still_checks(tmp_path):
    """jit records a traced program on disk for the next process, which then skips the
    trace: a program with checks is not recorded, so the next process traces (and
    checks) again."""
    code = """
        import numpy as np, rune_jit as rune
        from rune_jit._src.backend.cpu import runtime
        def f(x, k):
            return x + k
        g = rune.jit(f)
        print(g(np.ones(2, np.int32), 3).tolist(), runtime.stats["traced"])
        try:
            g(np.ones(2, np.int32), 2 ** 40)
        except OverflowError as e:
            print(e)
    """
    env = dict(os.environ, RUNE_JIT_CACHE_DIR=str(tmp_path), RUNE_JIT_SAVE_TRACES="1")
    for _ in range(2):
        out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env,
                             capture_output=True, text=True, check=True).stdout.splitlines()
        assert out == ["[4, 4] 1", NUMPY_SAYS]
