"""rune_jit.example_libraries against JAX's: the optimizers' trajectories, their state as
a jit argument and a loop carry, and stax networks."""

import numpy as np
import pytest

import rune_jit as rune
import rune_jit.numpy as rnp
from rune_jit.example_libraries import optimizers, stax

OPTIMIZERS = [
    ("sgd", (0.1,)), ("momentum", (0.02, 0.9)), ("nesterov", (0.02, 0.9)),
    ("adagrad", (0.1,)), ("rmsprop", (0.01,)), ("rmsprop_momentum", (0.01,)),
    ("adam", (0.05,)), ("adamax", (0.05,)), ("sm3", (0.1,)),
]


def loss(np_, params):
    w, (b,) = params["w"], params["b"]
    return np_.sum((w @ np_.array([1.0, -2.0]) + b - 3.0) ** 2) + np_.sum(w ** 4)


def params0():
    return {"w": np.array([[0.5, -1.0], [2.0, 0.25]]), "b": (np.array([0.1, -0.3]),)}


def run(lib, grad, name, args, steps=20, jit=lambda f: f):
    init, update, get_params = getattr(lib, name)(*args)
    state = init(params0())
    step = jit(lambda i, s: update(i, grad(get_params(s)), s))
    for i in range(steps):
        state = step(i, state)
    return get_params(state)


@pytest.mark.parametrize("name,args", OPTIMIZERS, ids=[o[0] for o in OPTIMIZERS])
@pytest.mark.slow
def test_trajectories_are_jaxs(name, args):
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    from jax.example_libraries import optimizers as jopt

    want = run(jopt, jax.grad(lambda p: loss(jax.numpy, p)), name, args)
    rgrad = rune.grad(lambda p: loss(rnp, p))
    for jit in (lambda f: f, rune.jit):
        got = run(optimizers, rgrad, name, args, jit=jit)
        assert np.all(np.isfinite(got["w"])) and not np.allclose(got["w"], params0()["w"])
        np.testing.assert_allclose(got["w"], want["w"], rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(got["b"][0], want["b"][0], rtol=1e-10, atol=1e-12)


def test_state_is_a_scan_carry_and_schedules_trace():
    schedule = optimizers.exponential_decay(0.02, 10, 0.5)
    init, update, get_params = optimizers.momentum(schedule, 0.9)
    grad = rune.grad(lambda p: loss(rnp, p))

    def train(p):
        def step(state, i):
            return update(i, grad(get_params(state)), state), None
        return get_params(rune.scan(step, init(p), np.arange(15))[0])

    eager = params0()
    state = init(eager)
    for i in range(15):
        state = update(i, grad(get_params(state)), state)
    for got in (train(params0()), rune.jit(train)(params0())):
        np.testing.assert_allclose(got["w"], get_params(state)["w"], rtol=1e-12)
    # and the trained loss differentiates through the whole loop (meta-gradient)
    meta = rune.grad(lambda p: loss(rnp, train(p)))(params0())
    assert np.all(np.isfinite(meta["w"]))


def test_schedules_and_clipping():
    assert optimizers.constant(0.3)(7) == 0.3
    np.testing.assert_allclose(optimizers.polynomial_decay(1.0, 10, 0.0)(5), 0.5)
    pw = optimizers.piecewise_constant([5, 10], [1.0, 0.5, 0.1])
    assert [float(pw(i)) for i in (0, 5, 6, 11)] == [1.0, 1.0, 0.5, 0.1]
    with pytest.raises(ValueError, match="2 boundaries need 3 values"):
        optimizers.piecewise_constant([5, 10], [1.0])
    g = {"a": np.array([3.0]), "b": np.array([4.0])}
    np.testing.assert_allclose(optimizers.l2_norm(g), 5.0)
    clipped = optimizers.clip_grads(g, 1.0)
    np.testing.assert_allclose(optimizers.l2_norm(clipped), 1.0)


def test_state_unpacks_and_packs():
    init, update, get_params = optimizers.adam(0.1)
    state = update(0, {"w": np.ones(2)}, init({"w": np.zeros(2)}))
    again = optimizers.pack_optimizer_state(optimizers.unpack_optimizer_state(state))
    np.testing.assert_array_equal(get_params(again)["w"], get_params(state)["w"])


def test_stax_network_trains_and_matches_jax_on_the_same_params():
    init, apply = stax.serial(stax.Dense(8), stax.Tanh, stax.FanOut(2),
                              stax.parallel(stax.Dense(3), stax.Identity()),
                              stax.FanInConcat(), stax.Dense(1))
    shape, params = init(rune.random.PRNGKey(0), (-1, 2))
    assert shape == (-1, 1)
    x = np.linspace(-1, 1, 10).reshape(5, 2)
    out = apply(params, x)
    assert out.shape == (5, 1)
    np.testing.assert_allclose(rune.jit(apply)(params, x), out, rtol=1e-12)
    g = rune.grad(lambda p: rnp.sum(apply(p, x) ** 2))(params)
    assert rune.tree.leaves(g) and all(np.all(np.isfinite(leaf)) for leaf in rune.tree.leaves(g))
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    from jax.example_libraries import stax as jstax

    _, japply = jstax.serial(jstax.Dense(8), jstax.Tanh, jstax.FanOut(2),
                             jstax.parallel(jstax.Dense(3), jstax.Identity),
                             jstax.FanInConcat(), jstax.Dense(1))
    np.testing.assert_allclose(out, japply(params, x), rtol=1e-12)
