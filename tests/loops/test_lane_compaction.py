"""Lane compaction: the compiled blocks of a vmapped iterate repack their running lanes as
others stop (lane_compaction.py). Results stay in their lanes, bit for bit those of the
interpreter and of plain blocks; running out of steps names the first lane in the
user's order, whichever block or queue pass meets it first; on threads too."""

import numpy as np
import pytest

import rune_jit as rune
import rune_jit.numpy as rnp
from rune_jit._src import config
from rune_jit._src.backend.cpu.rules import lane_loops


def newton_log(a, x0, max_steps=2000):
    """x = log a by Newton from x0: about x0 - log a steps when x0 is far above it."""
    return rune.iterate(lambda x: x - 1.0 + a * rnp.exp(-x), x0,
                        until=lambda x: rnp.abs(a * rnp.exp(-x) - 1.0) <= 1e-12,
                        max_steps=max_steps)


def heavy_tail(n, seed=0, far=200.0, idle=0.05):
    rng = np.random.default_rng(seed)
    a = np.exp(rng.uniform(-3.0, 3.0, n))
    d = rng.uniform(0.0, 4.0, n)
    d[rng.random(n) < 0.03] = far
    d[rng.random(n) < idle] = 0.0  # lanes that take no step
    return a, np.log(a) + d


def pytree_loop(a, x0):
    """A pytree carry of several dtypes: a float32 copy and an int32 step counter."""
    def step(c):
        return {"x": c["x"] - 1.0 + a * rnp.exp(-c["x"]), "n": c["n"] + 1,
                "f": (c["f"] * np.float32(0.5)).astype(np.float32)}
    init = {"x": x0, "n": np.int32(0), "f": np.float32(1.0)}
    return rune.iterate(step, init, until=lambda c: rnp.abs(a * rnp.exp(-c["x"]) - 1.0)
                        <= 1e-12, max_steps=500)


@pytest.mark.parametrize("f", [newton_log, pytree_loop])
@pytest.mark.parametrize("n", [5, 301, 20_011])  # no full block; blocks and lanes; threads
def test_results_are_the_interpreters_and_plain_blocks(f, n, monkeypatch):
    a, x0 = heavy_tail(n)
    got = rune.jit(rune.vmap(f))(a, x0)
    with monkeypatch.context() as m:
        m.setattr(lane_loops, "compacting", False)
        m.setenv("RUNE_JIT_CACHE", "0")
        plain = rune.jit(rune.vmap(lambda a, x0: f(a, x0 + 0.0)))(a, x0)
    with monkeypatch.context() as m:
        m.setattr(config, "backend", "interpret")
        want = rune.vmap(f)(a[:400], x0[:400])
    rune.tree_util.tree_map(np.testing.assert_array_equal, got, plain)
    rune.tree_util.tree_map(lambda g, w: np.testing.assert_allclose(g[:400], w, rtol=1e-12),
                            got, want)


@pytest.mark.parametrize("n", [200, 20_000])
def test_running_out_of_steps_names_the_first_lane(n):
    """Lane 0 is slow among fast ones: its block retires it to the queue, where it runs
    out of steps after lanes 64 to 127 (all slow: their blocks never retire) did; the
    error names lane 0 all the same."""
    a = np.ones(n)
    x0 = np.full(n, 2.0)
    x0[0] = x0[64:128] = 300.0
    with pytest.raises(rune.IterateError, match=r"max_steps = 100 steps, in lane 0(\n|$)"):
        rune.jit(rune.vmap(lambda a, x0: newton_log(a, x0, 100)))(a, x0)
    x0[0] = 2.0
    with pytest.raises(rune.IterateError, match=r"max_steps = 100 steps, in lane 64(\n|$)"):
        rune.jit(rune.vmap(lambda a, x0: newton_log(a, x0, 100)))(a, x0)


def test_reverse_mode_and_checks_under_compaction():
    """The gradient (its forward loop keeps tapes: plain blocks) and a check that fails
    in a lane the queue runs: named as the interpreter names it."""
    a, x0 = heavy_tail(300, idle=0.0)  # (a lane that takes no step has gradient 0)
    g = rune.jit(rune.vmap(rune.grad(newton_log)))(a, x0)
    np.testing.assert_allclose(g, 1.0 / a, rtol=1e-9)

    def checked(a, x0):
        def step(x):  # fails once in each slow lane, as it passes 100
            rune.check((x < 100.0) | (x > 101.0), "x = {}", x)
            return x - 1.0 + a * rnp.exp(-x)
        return rune.iterate(step, x0, until=lambda x: rnp.abs(a * rnp.exp(-x) - 1.0)
                            <= 1e-12, max_steps=2000)

    messages = []
    for run in (rune.jit(rune.vmap(checked)), rune.vmap(checked)):
        with pytest.raises(rune.CheckError) as err, pytest.MonkeyPatch.context() as m:
            if not messages:
                run(a, x0)
            else:
                m.setattr(config, "backend", "interpret")
                run(a, x0)
        messages.append(str(err.value).splitlines()[0])
    assert messages[0] == messages[1] and ", at step" in messages[0]
