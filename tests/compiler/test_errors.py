"""Bad inputs fail with errors whose messages name what is wrong and where."""

import re

import numpy as np
import pytest

import rune_jit as rune
import rune_jit.numpy as rnp


def raises(exc, *fragments):
    """A context asserting `exc` is raised with every fragment, in any order, in its message."""
    return pytest.raises(exc, match="(?s)" + "".join(f"(?=.*{re.escape(f)})" for f in fragments))


# ------------------------------------------------------------- grad of non-float inputs

@pytest.mark.parametrize("args, argnums, where, dtype", [
    ((3,), 0, "argument 0", "int64"),
    ((np.arange(3),), 0, "argument 0", "int64"),
    ((True,), 0, "argument 0", "bool"),
    ((np.int32(2),), 0, "argument 0", "int32"),
    ((1.0, np.array([1, 2], np.int32)), 1, "argument 1", "int32"),
    (({"a": 1.0, "n": np.int32(2)},), 0, "argument 0['n']", "int32"),
    ((1.0, [2.0, np.array([True])]), (0, 1), "argument 1[1]", "bool"),
])
def test_grad_of_integer_or_bool_input(args, argnums, where, dtype):
    with raises(TypeError, "grad requires float or complex inputs", where, dtype):
        rune.grad(lambda *a: 0.0 * rnp.sum(rnp.zeros(1)), argnums=argnums)(*args)


@pytest.mark.parametrize("who", [rune.jacfwd, rune.jacrev])
def test_jacobian_of_integer_input(who):
    with raises(TypeError, "requires float", "inputs", "argument 0", "int64"):
        who(lambda x: x * 1.0)(np.arange(3))


@pytest.mark.parametrize("f, shown", [
    (lambda x: x * 2.0, "shape (3,)"),
    (lambda x: rnp.outer(x, x), "shape (3, 3)"),
    (lambda x: rnp.argmax(x), "dtype int64"),
    (lambda x: rnp.sum(x) > 0, "dtype bool"),
    (lambda x: (rnp.sum(x), rnp.sum(x)), "tuple"),
])
def test_grad_of_non_scalar_or_non_float_output(f, shown):
    with raises(TypeError, "grad requires a scalar float output", shown, "jacrev"):
        rune.grad(f)(np.ones(3))


def test_grad_argnums_out_of_range():
    with raises(ValueError, "argnums 2", "out of range", "2 arguments"):
        rune.grad(lambda a, b: a * b, argnums=2)(1.0, 2.0)


def test_has_aux_requires_a_pair():
    with raises(TypeError, "has_aux", "pair"):
        rune.grad(lambda x: x * 2.0, has_aux=True)(1.0)


# ------------------------------------------------------------- vmap

@pytest.mark.parametrize("args, in_axes, fragments", [
    ((np.ones(3), np.ones(4)), 0, ["different sizes", "args[0] has size 3", "args[1] has size 4"]),
    (({"a": np.ones(3), "b": [np.ones((2, 4))]},), 0,
     ["args[0]['a'] has size 3", "args[0]['b'][0] has size 2"]),
    ((np.ones((3, 5)), np.ones(4)), (1, 0), ["args[0] has size 5", "args[1] has size 4"]),
])
def test_vmap_mismatched_axis_sizes(args, in_axes, fragments):
    with raises(ValueError, *fragments):
        rune.vmap(lambda *a: a[0], in_axes=in_axes)(*args)


@pytest.mark.parametrize("in_axes, shape, fragments", [
    (2, (3, 4), ["in_axes 2", "out of range", "args[0]", "shape (3, 4)"]),
    (-3, (3, 4), ["in_axes -3", "out of range", "args[0]", "2 dimensions"]),
    (0, (), ["in_axes 0", "out of range", "args[0]", "0 dimensions"]),
])
def test_vmap_in_axes_out_of_range(in_axes, shape, fragments):
    with raises(ValueError, *fragments):
        rune.vmap(lambda a: a, in_axes=in_axes)(np.ones(shape))


@pytest.mark.parametrize("in_axes, args, exc, fragments", [
    ((0,), (np.ones(3), np.ones(3)), ValueError, ["1 entries", "2 positional arguments"]),
    ([0, 0, 0], (np.ones(3), np.ones(3)), ValueError, ["3 entries", "2 positional"]),
    (({"b": 0},), ({"a": np.ones(3)},), ValueError, ["in_axes", "[0]", "dict", "PyTreeDef({'a': *})"]),
    (((0, 0),), ([np.ones(3), np.ones(3)],), ValueError, ["in_axes", "[0]", "tuple",
                                                          "PyTreeDef([*, *])"]),
    ((({"a": 0}, 0),), ((np.ones(3), np.ones(3)),), TypeError, ["in_axes for args[0][0]",
                                                                "{'a': 0}"]),
    (1.0, (np.ones(3),), TypeError, ["in_axes for args[0]", "int or None", "1.0"]),
    ("0", (np.ones(3),), TypeError, ["in_axes for args[0]", "'0'"]),
    (None, (np.ones(3),), ValueError, ["no argument is mapped"]),
])
def test_vmap_in_axes_of_wrong_structure(in_axes, args, exc, fragments):
    with raises(exc, *fragments):
        rune.vmap(lambda *a: a[0], in_axes=in_axes)(*args)


def test_vmap_out_axes_errors():
    with raises(ValueError, "out_axes 2", "out of range"):
        rune.vmap(lambda a: a, out_axes=2)(np.ones(3))
    with raises(ValueError, "out_axes", "tuple with 1 children", "PyTreeDef((*, *))"):
        rune.vmap(lambda a: (a, a), out_axes=(0,))(np.ones(3))


# ------------------------------------------------------------- broadcasting and shapes

@pytest.mark.parametrize("f", [
    lambda x, y: x + y, lambda x, y: y - x, lambda x, y: rnp.where(x > 0, x, y), np.maximum,
    rnp.multiply])
def test_broadcasting_incompatible_shapes_traced(f):
    with raises(ValueError, "could not be broadcast", "(2, 3)", "(4,)"):
        rune.grad(lambda x: rnp.sum(f(x, np.ones(4))))(np.ones((2, 3)))


@pytest.mark.parametrize("f", [rnp.add, rnp.arctan2, rnp.logical_and,
                               lambda x, y: rnp.where(True, x, y)])
def test_broadcasting_incompatible_shapes_concrete(f):
    with raises(ValueError, "could not be broadcast", "(2, 3)", "(4,)"):
        f(np.ones((2, 3)), np.ones(4))


@pytest.mark.parametrize("f, fragments", [
    (lambda x: x @ np.ones((2, 2)), ["matmul", "(2, 3)", "(2, 2)"]),
    (lambda x: x.reshape(4), ["reshape", "size 6", "(4,)"]),
    (lambda x: rnp.concatenate([x, np.ones((2, 2))]), ["concatenate", "(2, 3)", "(2, 2)"]),
    (lambda x: rnp.stack([x, x.T]), ["stack", "same shape"]),
    (lambda x: rnp.broadcast_to(x, (3, 3)), ["broadcast", "(2, 3)", "(3, 3)"]),
    (lambda x: rnp.linalg.solve(x, x[0]), ["solve", "square", "(2, 3)"]),
    (lambda x: rnp.squeeze(x, 0), ["squeeze", "not equal to one"]),
    (lambda x: x[0, 3], ["index 3", "axis 1", "size 3"]),
    (lambda x: x[0, 0, 0], ["too many indices"]),
])
def test_shape_errors_name_the_operation_and_shapes(f, fragments):
    with raises((ValueError, IndexError), *fragments):
        rune.grad(lambda x: rnp.sum(f(x)))(np.ones((2, 3)))


# ------------------------------------------------------------- pytree leaves

BAD_LEAVES = {
    "grad input": (lambda: rune.grad(lambda d: d["a"])({"a": 1.0, "b": "hi"}),
                   ["argument 0['b']", "str"]),
    "vmap input": (lambda: rune.vmap(lambda d: d["a"])({"a": np.ones(2), "b": [object()]}),
                   ["args[0]['b'][0]", "object"]),
    "jvp input": (lambda: rune.jvp(lambda a: a, ({"q": "x"},), ({"q": 1.0},)),
                  ["primals[0]['q']", "str"]),
    "vjp input": (lambda: rune.vjp(lambda a, b: a, 1.0, [2.0, "x"]), ["primals[1][1]", "str"]),
    "make_ir input": (lambda: rune.make_ir(lambda a: a)({"q": {1, 2}}), ["args[0]['q']", "set"]),
    "make_ir input after a static one": (
        lambda: rune.make_ir(lambda n, a: a, static_argnums=0)(3, {"q": "s"}),
        ["args[1]['q']", "str"]),
    "vmap output": (lambda: rune.vmap(lambda a: (a, {"z": "x"}))(np.ones(2)),
                    ["output[1]['z']", "str"]),
    "jvp output": (lambda: rune.jvp(lambda a: [a, "x"], (1.0,), (1.0,)), ["output[1]", "str"]),
    "vjp output": (lambda: rune.vjp(lambda a: {"k": (a, None, "x")}, 1.0),
                   ["output['k'][2]", "str"]),
    "grad output": (lambda: rune.grad(lambda a: "x")(1.0), ["output", "str"]),
}


@pytest.mark.parametrize("name", BAD_LEAVES)
def test_pytree_leaf_that_is_not_an_array(name):
    call, fragments = BAD_LEAVES[name]
    with raises(TypeError, *fragments, "not an array or a number"):
        call()


def test_rnp_rejects_non_numbers():
    with raises(TypeError, "rune_jit.numpy.add", "expected an array or a number", "str"):
        rnp.add(np.ones(2), "x")


# ------------------------------------------------------------- Python control flow on traced values

POINTER = ["rune_jit.cond", "rune_jit.numpy.where"]


def if_positive(x):
    if x > 0:
        return x
    return -x


@pytest.mark.parametrize("f, operation", [
    (if_positive, "bool()"),
    (lambda x: x * bool(x), "bool()"),
    (lambda x: x * int(x), "int()"),
    (lambda x: x * float(x), "float()"),
    (lambda x: x if (x > 0 and x < 1) else x, "bool()"),
    (lambda x: x * (not x), "bool()"),
    (lambda x: rnp.sum(np.asarray(x)), "np.asarray"),
    (lambda x: rnp.ones(3)[: x.astype(np.int64)].sum() * x, "index"),
])
@pytest.mark.parametrize("transform", ["grad", "vmap", "jvp"])
def test_python_control_flow_on_traced_value(f, operation, transform):
    run = {
        "grad": lambda: rune.grad(f)(0.5),
        "vmap": lambda: rune.vmap(f)(np.array([0.5, 1.5])),
        "jvp": lambda: rune.jvp(f, (0.5,), (1.0,)),
    }[transform]
    with pytest.raises(rune.ConcretizationError) as info:
        run()
    assert isinstance(info.value, TypeError)
    msg = str(info.value)
    assert operation in msg and "traced value" in msg
    assert all(p in msg for p in POINTER), msg


def test_traced_bounds_of_range_are_a_concretization_error():
    with raises(rune.ConcretizationError, "index", "rune_jit.cond"):
        rune.vmap(lambda x, n: x * len(range(n)))(np.ones(2), np.array([1, 2]))


def test_escaped_tracer_is_named():
    kept = []
    rune.grad(lambda x: (kept.append(x), x)[1])(1.0)
    with raises(rune.ConcretizationError, "escaped", "Return it"):
        rune.grad(lambda y: kept[0] * y)(1.0)


# ------------------------------------------------------------- unsupported dtypes

@pytest.mark.parametrize("dtype", [np.clongdouble, np.longdouble, np.dtype("datetime64[s]")])
def test_unsupported_dtypes_rejected(dtype):
    x = np.ones(3, dtype)
    for call in (lambda: rune.grad(lambda x: rnp.sum(x))(x),
                 lambda: rune.vmap(lambda x: x)(x),
                 lambda: rune.jvp(lambda x: x, (x,), (x,)),
                 lambda: rnp.sin(x),
                 lambda: rnp.add(x, 1)):
        with raises(TypeError, np.dtype(dtype).name, "not supported",
                    "float64, float32, float16, complex128, complex64, int64, int32, int16, "
                    "int8, uint64, uint32, uint16, uint8 and bool"):
            call()


@pytest.mark.parametrize("call", [
    lambda: rnp.zeros(3, np.clongdouble), lambda: rnp.ones(2, np.longdouble),
    lambda: rnp.astype(np.ones(3), np.clongdouble),
    lambda: rnp.sum(np.ones(3), dtype=np.clongdouble),
    lambda: rnp.arange(3, dtype=np.longdouble), lambda: rnp.eye(2, dtype=np.clongdouble),
    lambda: rnp.array([1, 2], dtype=np.clongdouble),
    lambda: rnp.full(2, np.clongdouble(3)),
    lambda: rune.vmap(lambda x: x.astype(np.clongdouble))(np.ones(3)),
    lambda: rune.vmap(lambda x: rnp.mean(x, dtype=np.longdouble))(np.ones((2, 3))),
])
def test_unsupported_dtypes_in_rnp(call):
    with raises(TypeError, "not supported"):
        call()


def test_complex_python_number_is_weak():
    out = rune.vmap(lambda x, c: x * c, in_axes=(0, None))(np.ones(3, np.float32), 1j)
    assert out.dtype == np.complex64


def test_python_int_beyond_int64():
    with raises(OverflowError, "does not fit in int64"):
        rune.vmap(lambda x, n: x * n, in_axes=(0, None))(np.ones(3), 2 ** 70)


# ------------------------------------------------------------- other transformations' arguments

@pytest.mark.parametrize("call, exc, fragments", [
    (lambda: rune.vjp(lambda x: x * 2.0, np.ones(3))[1](np.ones(2)), TypeError,
     ["cotangent", "float64[2]", "float64[3]"]),
    (lambda: rune.vjp(lambda x: x * 2.0, np.ones(3))[1](np.ones(3, np.float32)), TypeError,
     ["cotangent", "float32[3]", "float64[3]"]),
    (lambda: rune.vjp(lambda x: (x, x), np.ones(3))[1](np.ones(3)), TypeError,
     ["cotangent has structure", "PyTreeDef((*, *))"]),
    (lambda: rune.jvp(lambda x: x, (np.ones(3),), (np.ones(2),)), ValueError,
     ["tangents[0]", "(2,)", "(3,)"]),
    (lambda: rune.jvp(lambda x: x, (np.ones(3),), (np.ones(3, np.float32),)), TypeError,
     ["tangents[0]", "float32", "float64"]),
    (lambda: rune.jvp(lambda x: x, (np.ones(3),), ([np.ones(3)],)), TypeError,
     ["tangents have structure"]),
    (lambda: rune.jvp(lambda x: x, np.ones(3), np.ones(3)), TypeError,
     ["primals and tangents must be tuples or lists"]),
    (lambda: rune.check_grads(lambda x: x, 1.0, modes=("fwd", "sideways")), ValueError,
     ["unknown modes", "sideways"]),
    (lambda: rune.grad(lambda x: rune.check_grads(lambda y: y, x) or x)(1.0), TypeError,
     ["check_grads needs concrete arguments"]),
])
def test_transformation_argument_errors(call, exc, fragments):
    with raises(exc, *fragments):
        call()


COND_MISMATCHES = {
    "structure": (lambda x: (x, x), lambda x: x, 1.0,
                  ["true_fn returns PyTreeDef((*, *))", "false_fn returns PyTreeDef(*)",
                   "output is a tuple (*, *) in true_fn but a leaf in false_fn"]),
    "dtype": (lambda x: x, lambda x: x.astype(np.float32), 1.0,
              ["output is float64[] in true_fn but float32[] in false_fn"]),
    "dtype of second output": (lambda x: (x, x), lambda x: (x, x.astype(np.float32)),
                               np.ones(3),
                               ["output[1] is float64[3] in true_fn but float32[3] in false_fn"]),
    "shape": (lambda x: x, lambda x: x[:2], np.ones(3),
              ["output is float64[3] in true_fn but float64[2] in false_fn"]),
}


@pytest.mark.parametrize("name", COND_MISMATCHES)
def test_cond_branches_that_disagree(name):
    true_fn, false_fn, operand, fragments = COND_MISMATCHES[name]
    with raises(TypeError, "cond", *fragments):
        rune.cond(True, true_fn, false_fn, operand)


def test_cond_predicate_must_be_a_scalar():
    with raises(TypeError, "cond", "predicate", "scalar", "(2,)"):
        rune.cond(np.ones(2) > 0, lambda: 1.0, lambda: 2.0)


def test_linearize_names_a_tangent_of_another_dtype():
    """A float32 tangent of a float64 primal reached the scan it was fed to, whose
    message ("the step's params do not match the operands") named neither."""
    xs = np.arange(1.0, 5.0, dtype=np.float32)
    _, f_jvp = rune.linearize(lambda c: rune.scan(lambda a, r: (a * r, a * r), c, xs)[1],
                              np.float64(1.5))
    with pytest.raises(TypeError, match=r"tangents\[0\] has type float32\[\], but the "
                                        r"primal there has type float64\[\]"):
        f_jvp(np.float32(1.0))
    np.testing.assert_allclose(f_jvp(1.0), [1.0, 2.0, 6.0, 24.0])  # a Python number fits
