"""A remat step with a saving policy that holds a loop: reverse mode (fuzz seed 551, once
its loops took `checkpoints=`). The policy's known side was the body's equations whose
inputs are all known; a loop's jvp computes values and tangents in one equation, so
its values came out unknown ("a primal output came out unknown"; under a checkpointed
scan, a transpose of a value times an unknown). The known side is now the body's own
split, which splits the loop."""

import numpy as np
import pytest

import rune_jit as rune
import rune_jit.numpy as rnp

POLICY = rune.checkpoint_policies.dots_saveable


def step(a, c, use_dot):
    d = rnp.dot(a, c)  # what the policy saves (unused: DCE leaves it to the policy)
    inner = rune.scan(lambda z, _: (rnp.sin(z) * z + 0.5, rnp.sum(c)), c, length=3)[0]
    return inner + (d if use_dot else 0.0)


def outer(a, c, policy, checkpoints, use_dot):
    """A scan of a remat step (the fuzz program's shape): policy None is the tape."""
    def body(h, _):
        f = (lambda h: step(a, h, use_dot)) if policy is None else rune.remat(
            lambda h: step(a, h, use_dot), policy=policy)
        return f(h), None
    return rnp.sum(rune.scan(body, c, length=3, checkpoints=checkpoints)[0] ** 2)


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["interpret", "native"])
def test_grad_of_a_policy_remat_step_holding_a_loop_is_the_tape_gradient(backend):
    from rune_jit import config

    a, c = np.array([0.5, -0.25, 0.75]), np.array([0.1, -0.4, 0.3])
    old, config.backend = config.backend, backend
    try:
        for use_dot in (False, True):
            want = rune.grad(outer, argnums=(0, 1))(a, c, None, "all", use_dot)
            for k in ("all", 1, 2):
                for f in (rune.grad(outer, argnums=(0, 1)),
                          rune.jit(rune.grad(outer, argnums=(0, 1)), static_argnums=(2, 3, 4))):
                    got = f(a, c, POLICY, k, use_dot)
                    for g, w in zip(got, want):
                        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-14)
        # the remat step alone (no outer loop)
        g = rune.grad(lambda c: rnp.sum(rune.remat(lambda h: step(a, h, True),
                                                    policy=POLICY)(c)))(c)
        np.testing.assert_allclose(g, rune.grad(lambda c: rnp.sum(step(a, c, True)))(c),
                                   rtol=1e-12, atol=1e-14)
    finally:
        config.backend = old
