"""remat: every transformation sees remat(f) as f (values and derivatives agree to
rounding); reverse mode keeps f's arguments and recomputes the rest."""

import numpy as np
import pytest

import rune_jit as rune
import rune_jit.numpy as rnp

TOL = dict(rtol=1e-12, atol=1e-12)


def layer_fn(x):
    return rnp.tanh(rnp.sin(x))


layer = rune.remat(layer_fn)


def deep_with(step_layer):
    """The seed's example: a scan whose step applies `step_layer`."""
    def deep(xs):
        return rune.scan(lambda acc, row: (step_layer(acc + row),) * 2, np.float64(0.5), xs)[0]

    return deep


def two_args(x, w):
    h = rnp.sin(x * w)
    return {"h": h, "e": rnp.exp(h) * w}


def with_capture(x):
    w = rnp.cos(x[0])
    return rnp.sum(rune.remat(lambda y: rnp.tanh(y * w))(x))


def scan_inside(xs):
    return rune.scan(lambda c, x: (rnp.sin(c) * x + c, None), np.float64(0.2), xs)[0]


xs = np.linspace(-0.7, 1.3, 6)
PAIRS = {
    "seed: scan of a remat layer": (deep_with(layer), deep_with(layer_fn), (xs,)),
    "pytree output, two args": (
        lambda x, w: rnp.sum(rune.remat(two_args)(x, w)["e"]),
        lambda x, w: rnp.sum(two_args(x, w)["e"]), (xs, np.float64(0.8))),
    "captured value": (with_capture, lambda x: rnp.sum(rnp.tanh(x * rnp.cos(x[0]))), (xs,)),
    "remat of a loop": (rune.remat(scan_inside), scan_inside, (xs,)),
    "nested remat": (lambda x: rnp.sum(rune.remat(lambda y: layer(y) * y)(x)),
                     lambda x: rnp.sum(layer_fn(x) * x), (xs,)),
}


@pytest.fixture(params=list(PAIRS), ids=list(PAIRS))
def pair(request):
    return PAIRS[request.param]


def test_values(backend, pair):
    rematted, plain, args = pair
    np.testing.assert_allclose(backend(rematted)(*args), plain(*args), **TOL)


def test_gradients(backend, pair):
    rematted, plain, args = pair
    nums = tuple(range(len(args)))
    got = backend(rune.grad(rematted, argnums=nums))(*args)
    want = rune.grad(plain, argnums=nums)(*args)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, **TOL)
    rune.check_grads(rematted, *args)


def test_jvp(pair):
    rematted, plain, args = pair
    tangents = tuple(np.ones_like(a) for a in args)
    np.testing.assert_allclose(rune.jvp(rematted, args, tangents)[1],
                               rune.jvp(plain, args, tangents)[1], **TOL)


def test_vmap_and_vmap_of_grad(pair):
    rematted, plain, args = pair
    batched = tuple(np.stack([a, a * 0.5, -a]) for a in args)
    np.testing.assert_allclose(rune.vmap(rematted)(*batched), rune.vmap(plain)(*batched), **TOL)
    np.testing.assert_allclose(rune.vmap(rune.grad(rematted))(*batched),
                               [rune.grad(plain)(*lane) for lane in zip(*batched)], **TOL)


def test_second_derivatives(pair):
    rematted, plain, args = pair
    hvp = lambda f: rune.jvp(rune.grad(f), args, tuple(np.ones_like(a) for a in args))[1]
    np.testing.assert_allclose(hvp(rematted), hvp(plain), **TOL)
    np.testing.assert_allclose(rune.hessian(rematted)(*args), rune.hessian(plain)(*args), **TOL)


def test_remat_is_an_equation_of_its_own():
    ir = rune.make_ir(lambda x: rnp.sum(layer(x)))(xs)
    [eqn] = [e for e in ir.eqns if e.prim.name == "remat"]
    assert {e.prim.name for e in eqn.params["body"].eqns} == {"sin", "tanh"}
