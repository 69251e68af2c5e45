"""Eager calls near NumPy (issue 18): rune_jit.numpy's concrete-array fast path, the
caches of eager transformations and loops, and jit's quick path for calls of numbers,
pytrees and static values. Each is held to the general path's results (values and
dtypes), its errors, and caches that never give an old result."""

import gc
import sys
import types
import warnings
import weakref

import numpy as np
import pytest

import rune_jit as rune
import rune_jit.numpy as rnp
from rune_jit._src import backend
from rune_jit._src.call import eager_cache
from rune_jit._src.call.code_digest import digest
from rune_jit._src.call.guard import guard

DTYPES = ["float64", "float32", "float16", "int64", "int32", "int8", "uint8", "uint64",
          "bool"]


def traces() -> int:
    return backend.stats["traced"]


def same(got, want) -> None:
    """Equal values (NaN where NaN) of the same type and dtype."""
    assert type(got) is type(want) and got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)


def outcome(f, *args):
    """f's result, or its error's type and message (warnings recorded either way)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            out = ("ok", f(*args))
        except Exception as err:  # noqa: BLE001 (compared, not handled)
            out = ("error", type(err), str(err))
    return out, sorted({str(w.message) for w in caught})  # (the general path may warn twice)


def same_outcome(fast, general, *args) -> None:
    (got, got_warn), (want, want_warn) = outcome(fast, *args), outcome(general, *args)
    assert got[0] == want[0], (got, want)
    if got[0] == "ok":
        same(got[1], want[1])
    else:
        assert got == want
    assert got_warn == want_warn


# ------------------------------------------------------------- the rnp fast path

BINARY = ["add", "subtract", "multiply", "divide", "power", "maximum", "minimum",
          "arctan2", "floor_divide", "remainder", "less", "equal", "greater_equal"]
UNARY = ["sin", "exp", "log", "sqrt", "tanh", "arcsin", "cos", "log2"]
REDUCTIONS = ["sum", "prod", "max", "min"]


def values(dtype: str, shape=(5,)) -> np.ndarray:
    base = np.array([-2.5, 0.0, 1.0, 3.0, np.inf, np.nan, 7.0, -0.0, 300.0, 0.5])
    n = int(np.prod(shape))
    with np.errstate(all="ignore"):
        return np.resize(base, n).reshape(shape).astype(dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", BINARY)
def test_binary_fast_path_is_the_general_path(name, dtype):
    """Arrays of one dtype (shapes equal, broadcast, 0-d, not broadcastable) and an array
    with each kind of Python scalar: values, dtypes, warnings and errors as the general
    path gives them."""
    f = getattr(rnp, name)
    a = values(dtype)
    b = values(dtype)[::-1].copy()
    for x, y in [(a, b), (a, b[:1]), (a.reshape(5, 1), b), (a[0:1].reshape(()), b[2:3]
                                                          .reshape(())), (a, b[:3])]:
        same_outcome(f, f.__wrapped__, x, y)
    for scalar in (2.0, 2, True, -1, 300, 2**40, np.float32(2.0)):
        same_outcome(f, f.__wrapped__, a, scalar)
        same_outcome(f, f.__wrapped__, scalar, a)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", UNARY)
def test_unary_fast_path_is_the_general_path(name, dtype):
    f = getattr(rnp, name)
    for x in (values(dtype), values(dtype, (2, 3)), values(dtype, ())):
        same_outcome(f, f.__wrapped__, x)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", REDUCTIONS)
def test_reduction_fast_path_is_the_general_path(name, dtype):
    f = getattr(rnp, name)
    x = values(dtype, (3, 4))
    for args in [(x,), (x, 0), (x, -1), (x, 2), (x, None), (values(dtype, ()),),
                 (np.ones((0, 3), dtype),), (np.ones((0, 3), dtype), 1)]:
        same_outcome(f, f.__wrapped__, *args)


def test_nep50_weak_scalars_and_their_errors():
    f32 = np.ones(3, np.float32)
    assert rnp.add(f32, 2.0).dtype == np.float32 and rnp.add(2.0, f32).dtype == np.float32
    assert rnp.multiply(np.arange(3, dtype=np.int16), 2).dtype == np.int16
    assert rnp.add(np.arange(3), 2.5).dtype == np.float64
    with pytest.raises(OverflowError, match="Python integer 300 out of bounds for int8"):
        rnp.add(np.ones(2, np.int8), 300)
    with pytest.raises(OverflowError, match="out of bounds for uint8"):
        rnp.subtract(np.ones(2, np.uint8), -1)


def test_errors_keep_rune_jits_messages():
    with pytest.raises(ValueError, match=r"rune_jit.numpy.add: operands could not be "
                                         r"broadcast together with shapes \(2,\) \(3,\)"):
        rnp.add(np.ones(2), np.ones(3))
    with pytest.raises(TypeError, match=r"rune_jit.numpy.sin: dtype timedelta64\[s\] is "
                                        "not supported"):
        rnp.sin(np.ones(2, "timedelta64[s]"))
    with pytest.raises(np.exceptions.AxisError, match="rune_jit.numpy.sum: axis 2"):
        rnp.sum(np.ones((2, 2)), 2)
    with pytest.raises(ValueError, match="rune_jit.numpy.max: zero-size array"):
        rnp.max(np.ones(0))


def test_results_are_arrays_even_when_numpy_gives_scalars():
    for out in (rnp.add(np.array(1.0), np.array(2.0)), rnp.sin(np.array(0.5)),
                rnp.sum(np.ones(3)), rnp.max(np.ones((2, 2)))):
        assert type(out) is np.ndarray and out.shape == ()


def test_under_a_trace_concrete_operands_are_still_staged():
    """Omnistaging: inside a trace, rnp.add of two NumPy arrays is an equation of the
    program, not a value computed while tracing."""
    a, b = np.arange(3.0), np.ones(3)
    ir = str(rune.make_ir(lambda x: x * rnp.add(a, b))(np.ones(3)))
    assert "= add constfloat64[3] constfloat64[3]" in ir


def test_subclasses_and_array_likes_take_the_general_path():
    with pytest.raises(TypeError, match="subclass of numpy.ndarray"):
        rnp.add(np.ma.masked_array([1.0]), np.ones(1))
    same(rnp.add([1.0, 2.0], np.ones(2)), np.array([2.0, 3.0]))
    same(rnp.sin(np.float32(0.0)), np.asarray(np.float32(0.0)))


# ------------------------------------------------------------- eager caches: not re-traced

x5 = np.linspace(0.1, 1.0, 5)


def loss(x):
    return rnp.sum(rnp.sin(x) * x)


def test_a_second_grad_call_does_not_trace_and_the_third_runs_compiled_code():
    before = traces()
    first = rune.grad(loss)(x5)
    second = rune.grad(loss)(x5)  # a new grad(loss): the same function
    third = rune.grad(loss)(x5)
    assert traces() == before + 1
    np.testing.assert_allclose(first, np.sin(x5) + x5 * np.cos(x5), rtol=1e-14)
    np.testing.assert_allclose(second, first, rtol=1e-14)
    np.testing.assert_allclose(third, first, rtol=1e-14)
    assert first.dtype == third.dtype == np.float64


def test_an_eager_scan_with_the_same_step_is_not_traced_again():
    def step(c, x):
        return c * 0.5 + x, c

    before = traces()
    outs = [rune.scan(step, np.float64(0.0), x5) for _ in range(3)]
    assert traces() == before + 1
    for carry, ys in outs:
        np.testing.assert_allclose(carry, outs[0][0])
        np.testing.assert_allclose(ys, outs[0][1])


def test_a_step_made_anew_at_each_call_finds_its_program():
    def running(xs, a):
        def step(c, x):
            return c * a + x, c
        return rune.scan(step, np.float64(0.0), xs)[0]

    running(x5, 0.5)
    before = traces()
    assert running(x5, 0.5) == running(x5, 0.5)
    assert traces() == before
    np.testing.assert_allclose(running(x5, 0.25), _python_scan(x5, 0.25))
    assert traces() == before + 1  # another captured value: another program


def _python_scan(xs, a):
    c = 0.0
    for x in xs:
        c = c * a + x
    return c


def test_iterate_is_cached_and_its_error_is_the_same_every_call():
    def newton(a, steps):
        return rune.iterate(lambda x: (x + a / x) / 2, a,
                            until=lambda x: rnp.abs(x * x - a) <= 1e-12 * a, max_steps=steps)

    a = np.float64(2.0)
    before = traces()
    for _ in range(3):
        np.testing.assert_allclose(newton(a, 50), np.sqrt(2.0))
    assert traces() == before + 1
    for _ in range(3):
        with pytest.raises(rune.IterateError) as err:
            newton(a, 2)
        assert str(err.value) == "rune_jit.iterate: until is still false after max_steps = 2 steps"


def test_transformations_give_their_results_through_the_cache():
    def f(x, y, n):
        return rnp.sum((x * y) ** n)

    x, y = np.array([1.0, 2.0]), np.array([3.0, 4.0])
    for _ in range(3):
        np.testing.assert_allclose(rune.grad(f)(x, y, 2), 2 * x * y * y)
        np.testing.assert_allclose(rune.grad(f, argnums=(0, 1))(x, y, 2)[1], 2 * x * x * y)
        v, g = rune.value_and_grad(f)(x, y, 3)
        np.testing.assert_allclose(v, np.sum((x * y) ** 3))
        np.testing.assert_allclose(rune.vmap(lambda a, b: a * b, in_axes=(0, None))(x, 2.0),
                                   x * 2)
        np.testing.assert_allclose(rune.jacfwd(f)(x, y, 1), y)
        np.testing.assert_allclose(rune.hessian(f)(x, y, 2), np.diag(2 * y * y))
        aux = rune.grad(lambda a: (rnp.sum(a * a), a * 2), has_aux=True)(x)
        np.testing.assert_allclose(aux[1], x * 2)


def test_errors_are_the_general_paths_at_every_call():
    for _ in range(2):
        with pytest.raises(TypeError, match="grad requires float or complex inputs, but "
                                            "argument 0"):
            rune.grad(lambda n: n * 1.0)(np.arange(3))
        with pytest.raises(TypeError, match="grad requires a scalar float output"):
            rune.grad(lambda x: x * 2.0)(x5)
        with pytest.raises(ValueError, match="argnums 3 is out of range"):
            rune.grad(loss, argnums=3)(x5)


def test_python_side_effects_happen_when_the_function_is_traced(capsys):
    """As under jit: a cached call runs the program, not the Python (rune.debug.print
    prints from the program at every call)."""
    def f(x):
        print("traced")
        rune.debug.print("value {}", rnp.sum(x))
        return rnp.sum(x * x)

    for _ in range(3):
        rune.grad(f)(np.ones(2))
    out = capsys.readouterr().out
    assert out.count("traced") == 1 and out.count("value 2.0") == 3


# ------------------------------------------------------------- eager caches: never stale

K = 2.0
W = np.array([1.0, 2.0, 3.0, 4.0, 5.0])


def helper(x):
    return x * 3.0


def reads_globals(x):
    return rnp.sum(x * K * W) + rnp.sum(helper(x))


def _change(what: str, monkeypatch) -> None:
    mod = sys.modules[__name__]
    if what == "a global number":
        monkeypatch.setattr(mod, "K", 5.0)
    elif what == "a global array, in place":
        W[0] = -4.0
    elif what == "a global array, replaced":
        monkeypatch.setattr(mod, "W", W * 2)
    elif what == "a global function":
        monkeypatch.setattr(mod, "helper", lambda x: x * 7.0)
    else:
        monkeypatch.setattr(rnp, "sum", lambda a: rnp.max(a))


@pytest.mark.parametrize("change", ["a global number", "a global array, in place",
                                    "a global array, replaced", "a global function",
                                    "a patched rnp.sum"])
def test_a_changed_global_is_never_missed(change, monkeypatch):
    saved = W.copy()
    try:
        for _ in range(3):  # interpreted, then compiled: both must see the change
            rune.grad(reads_globals)(x5)
        _change(change, monkeypatch)
        want = rune.jit(rune.grad(reads_globals))(x5)  # a new jit: traced now
        for _ in range(3):
            np.testing.assert_allclose(rune.grad(reads_globals)(x5), want)
    finally:
        W[...] = saved


def test_a_changed_closure_cell_default_or_attribute_is_never_missed():
    scale = 2.0

    def f(x, power=2):
        return rnp.sum(x ** power) * scale * getattr_free(f)

    def getattr_free(fn):  # reads an attribute by name, as code may
        return fn.factor

    f.factor = 1.0
    g = rune.grad(f)
    for _ in range(2):
        np.testing.assert_allclose(g(x5), 2 * x5 * 2.0)
    scale = 3.0
    np.testing.assert_allclose(g(x5), 2 * x5 * 3.0)
    f.__defaults__ = (3,)
    np.testing.assert_allclose(g(x5), 3 * x5 ** 2 * 3.0)
    f.factor = 10.0
    np.testing.assert_allclose(g(x5), 3 * x5 ** 2 * 30.0)


def test_a_captured_array_changed_in_place_is_read_as_it_is_now():
    """Outside jit, a captured array is read at each call (it is baked only under jit)."""
    w = np.array([1.0, 1.0])

    def step(c, x):
        return c + w * x, None

    for k in range(1, 4):
        w[...] = k
        carry, _ = rune.scan(step, np.zeros(2), np.ones((3, 2)))
        np.testing.assert_allclose(carry, [3.0 * k] * 2)


def test_a_module_attribute_is_never_missed():
    mod = types.ModuleType("user_constants")
    mod.C = 2.0
    ns = {"rnp": rnp, "mod": mod}
    exec("def f(x):\n    return rnp.sum(x * mod.C)", ns)
    for _ in range(2):
        np.testing.assert_allclose(rune.grad(ns["f"])(x5), 2.0)
    mod.C = 4.0
    np.testing.assert_allclose(rune.grad(ns["f"])(x5), 4.0)
    mod.D = 1.0  # an attribute the code does not read changes nothing
    np.testing.assert_allclose(rune.grad(ns["f"])(x5), 4.0)


def test_other_signatures_and_static_values_are_other_programs():
    def f(x, n, opts):
        return rnp.sum(x ** n) * opts["w"]

    x32 = x5.astype(np.float32)
    cases = [((x5, 2, {"w": 1.0}), 2 * x5), ((x5, 3, {"w": 1.0}), 3 * x5 ** 2),
             ((x5, 2, {"w": 2.0}), 4 * x5), ((x32, 2, {"w": 1.0}), 2 * x32),
             ((x5[:3], 2, {"w": 1.0}), 2 * x5[:3]),
             ((x5, np.float64(2.0), {"w": 1.0}), 2 * x5)]
    for _ in range(2):
        for args, want in cases:
            got = rune.grad(f)(*args)
            assert got.dtype == args[0].dtype and got.shape == args[0].shape
            np.testing.assert_allclose(got, want, rtol=1e-6)


def test_weak_and_strong_numbers_are_other_programs():
    f32 = np.ones(2, np.float32)
    for _ in range(3):
        assert rune.vmap(lambda a, b: a * b, in_axes=(0, None))(f32, 2.0).dtype == np.float32
        assert rune.vmap(lambda a, b: a * b, in_axes=(0, None))(
            f32, np.float64(2.0)).dtype == np.float64
        carry, _ = rune.scan(lambda c, x: (c + x, None), 0.0, f32)
        assert carry.dtype == np.float32


def test_pytree_structures_are_other_programs():
    def f(p):
        return rnp.sum(p["a"] * 2.0) + (rnp.sum(p["b"]) if "b" in p else 0.0)

    for _ in range(2):
        g = rune.grad(f)({"a": x5, "b": x5})
        np.testing.assert_allclose(g["a"], 2.0) and np.testing.assert_allclose(g["b"], 1.0)
        assert set(rune.grad(f)({"a": x5})) == {"a"}


def test_what_the_guard_cannot_see_through_is_never_cached():
    calls = []

    def reads_a_list(x):
        calls.append(1)
        return rnp.sum(x) * len(calls)

    before = traces()
    got = [float(rune.grad(lambda x: reads_a_list(x) * 1.0)(x5)[0]) for _ in range(3)]
    # traced at every call, as jit traces it (its arguments traced), and never kept
    assert got == [1.0, 2.0, 3.0] and traces() == before + 3


def test_the_guard_refuses_what_the_digest_refuses():
    namespace = {"np": np, "rnp": rnp, "L": [1.0], "D": {"k": 1.0}}
    exec("def reads_globals(x):\n    return x * globals()['K']\n"
         "def computed(x):\n    return x * getattr(np, 'pi')\n"
         "def random(x):\n    return x * np.random.rand()\n"
         "def opens(x):\n    return x * float(open('f').read())\n"
         "def a_list(x):\n    return x * L[0]\n"
         "def a_dict(x):\n    return x * D['k']\n"
         "def plain(x):\n    return rnp.sin(x) * np.pi\n", namespace)
    for name in ("reads_globals", "computed", "random", "opens", "a_list", "a_dict"):
        assert digest(namespace[name]) is None and guard(namespace[name]) is None, name
    assert guard(namespace["plain"]) is not None
    assert guard(object()) is None and guard(types.SimpleNamespace()) is None


def test_a_dropped_function_takes_its_programs_with_it():
    """No cache holds a function, nor its code: a table goes when its code does (a
    function defined again, in a notebook cell or by exec, does not leak its programs)."""
    ns = {"rnp": rnp}
    exec("def f(x):\n    return rnp.sum(x * 3.0)", ns)
    rune.grad(ns["f"])(x5), rune.grad(ns["f"])(x5)
    f, code = weakref.ref(ns["f"]), weakref.ref(ns["f"].__code__)
    assert id(code()) in eager_cache._tables
    key = id(code())
    del ns
    gc.collect()
    assert f() is None and code() is None
    assert key not in eager_cache._tables


def test_a_changing_closure_keeps_a_bounded_table():
    def step_for(k):
        return lambda c, x: (c + x * k, None)

    for k in range(eager_cache.ENTRIES + 2):
        carry, _ = rune.scan(step_for(float(k)), np.float64(0.0), x5)
        np.testing.assert_allclose(carry, np.sum(x5) * k)
    table = eager_cache._tables[id(step_for(0.0).__code__)][1]
    assert len(table) == eager_cache.ENTRIES


def test_disable_jit_runs_the_steps_in_python(capsys):
    def step(c, x):
        print("step")
        return c + x, None

    rune.scan(step, np.float64(0.0), x5)
    with rune.disable_jit():
        rune.scan(step, np.float64(0.0), x5)
    assert capsys.readouterr().out.count("step") == 1 + len(x5)


# ------------------------------------------------------------- jit's quick path

def test_jitted_calls_of_numbers_pytrees_and_statics_match_the_general_path():
    f = rune.jit(lambda x, s, d, n: (x * s + d["a"] - d["b"]) ** n, static_argnums=3)
    x32, a = np.ones(3, np.float32), np.arange(3.0)
    calls = [(x32, 2.0, {"a": x32, "b": x32}, 2), (x32, np.float64(2.0), {"a": x32, "b": x32}, 2),
             (x32, 2, {"a": x32, "b": x32}, 3), (a, 2.0, {"a": a, "b": a}, 2),
             (a, True, {"a": a, "b": a[::-1]}, 1)]
    for _ in range(3):  # the first call of each signature is the general path's
        for x, s, d, n in calls:
            got, want = f(x, s, d, n), (x * s + d["a"] - d["b"]) ** n  # NumPy 2: NEP 50
            assert got.dtype == want.dtype, (x.dtype, s, n)
            np.testing.assert_allclose(got, want, rtol=1e-6)


def test_jitted_quick_calls_check_python_ints_and_hide_frames():
    f = rune.jit(lambda x, n: x + n)
    i8 = np.ones(2, np.int8)
    assert f(i8, 3).dtype == np.int8
    for _ in range(2):
        with pytest.raises(OverflowError, match="Python integer 300 out of bounds for int8"):
            f(i8, 300)
    with pytest.raises(OverflowError):
        f(i8, 2**70)

    g = rune.jit(lambda a, d: rune.iterate(lambda v: v * 2.0, a, until=lambda v: v > d["top"],
                                           max_steps=3))
    g(1.0, {"top": 2.0})
    for _ in range(2):
        with pytest.raises(rune.IterateError) as err:
            g(1.0, {"top": 100.0})
        assert "frames are hidden" in str(err.value.__notes__)


def test_the_quick_path_follows_the_backend_setting(monkeypatch):
    from rune_jit._src import config

    f = rune.jit(lambda x, s: rnp.sin(x) * s)
    x = np.linspace(0.0, 3.0, 7)
    f(x, 2.0), f(x, 2.0)  # compiled, then the quick path
    before = traces()
    monkeypatch.setattr(config, "backend", "interpret")
    same(f(x, 2.0), np.sin(x) * 2.0)  # NumPy's sin, not compiled code's
    assert traces() == before + 1


def test_the_library_hides_no_function_from_the_guard():
    """A function calling any rune_jit.numpy, nn, scipy.special or lax function can be
    cached: none of them holds a value the digest cannot see through (an object(), a dict)."""
    from rune_jit import lax, nn
    from rune_jit.scipy import special

    for module in (rnp, nn, special, lax):
        for name in module.__all__:
            fn = getattr(module, name)
            if callable(fn) and not isinstance(fn, type):
                assert digest(fn) is not None and guard(fn) is not None, (module, name)
