"""Jitted and transformed functions pickle (by name where their module holds them, else
by the function they wrap) and work in other processes: multiprocessing with spawn,
forkserver and fork, and cloudpickle for lambdas and closures."""

import multiprocessing as mp
import pickle

import numpy as np
import pytest

import rune_jit as rune
import rune_jit.numpy as rnp
import pickled_functions as pf

X = np.arange(1.0, 5.0)


def test_jitted_functions_pickle_by_name_and_by_what_they_wrap():
    for f, args, want in [(pf.running_product, (X,), 24.0),
                          (pf.power_sum_jit, (X, 2), 30.0),
                          (rune.jit(pf.power_sum, static_argnames="n"), (X, 3), 100.0)]:
        g = pickle.loads(pickle.dumps(f))
        assert float(g(*args)) == want
    assert pickle.loads(pickle.dumps(pf.running_product)) is pf.running_product  # by name


def test_transformed_functions_pickle():
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(pf.grad_of_power_sum))(X, 2), 2 * X)
    g = pickle.loads(pickle.dumps(rune.jit(rune.vmap(rune.grad(pf.power_sum), (0, None)),
                                           static_argnums=1)))
    np.testing.assert_array_equal(g(np.stack([X, X]), 2), [2 * X, 2 * X])
    assert repr(pickle.loads(pickle.dumps(pf.jit_vmap_grad))) == repr(pf.jit_vmap_grad)


def test_a_pickled_function_does_not_carry_its_compiled_programs():
    pf.power_sum_jit(X, 2)
    assert len(pickle.dumps(pf.power_sum_jit)) < 200  # its name
    assert len(pickle.loads(pickle.dumps(rune.jit(pf.power_sum, static_argnums=1))).cache) == 0


@pytest.mark.slow
@pytest.mark.parametrize("method", ["spawn", "forkserver", "fork"])
def test_a_pool_maps_jitted_functions(method):
    pf.running_product(X)  # compiled here first: fork's children inherit the programs
    with mp.get_context(method).Pool(2) as pool:
        got = pool.map(pf.running_product, [X, 2 * X, 3 * X])
        roots = pool.map(rune.vmap(pf.newton_sqrt), [X, X * X])
        grads = pool.starmap(pf.jit_vmap_grad, [(np.stack([X, X]),)])
    assert [float(g) for g in got] == [24.0, 24.0 * 16, 24.0 * 81]
    np.testing.assert_allclose(roots[1], X, rtol=1e-12)
    np.testing.assert_array_equal(grads[0], rune.vmap(rune.grad(pf.running_product))(
        np.stack([X, X])))


def test_cloudpickle_carries_lambdas_and_closures():
    cloudpickle = pytest.importorskip("cloudpickle", reason="in the dask extra")
    scale = np.float64(3.0)
    f = rune.jit(lambda x: rnp.sum(rnp.sin(x) * scale))
    g = rune.grad(lambda x: rnp.sum(x ** 2) * scale)
    for fn, want in [(f, np.sum(np.sin(X)) * 3.0), (g, 6.0 * X)]:
        np.testing.assert_allclose(cloudpickle.loads(cloudpickle.dumps(fn))(X), want)


def test_every_public_function_pickles_by_name():
    import rune_jit.nn as nn
    import rune_jit.numpy.linalg as la
    import rune_jit.random as rr
    import rune_jit.scipy.special as special
    from rune_jit import lax

    for module in (rnp, nn, la, rr, special, lax):
        for name in getattr(module, "__all__", dir(module)):
            f = getattr(module, name, None)
            if callable(f) and not isinstance(f, type) and not name.startswith("_") and \
                    getattr(f, "__module__", "").startswith("rune_jit"):
                assert pickle.loads(pickle.dumps(f)) is f, f"{module.__name__}.{name}"
