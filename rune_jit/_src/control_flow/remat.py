"""The user's `remat` (`checkpoint`) and `checkpoint_name`, over the remat and name
primitives (ops/remat.py, which also holds the policies)."""

from __future__ import annotations

from typing import Any, Callable, Sequence

from .. import tree
from ..call.arguments import as_argnums, as_value, flatten_args, leaf_type, wraps
from ..ops.remat import Policy, name_p, nothing_saveable, remat_p
from ..trace import bind, bind1, trace_closed
from ..tracebacks import api_boundary


def checkpoint_name(x: Any, name: str) -> Any:
    """`x`, marked `name` for the policies `save_only_these_names` and
    `save_any_names_but_these` (a pytree: every leaf is marked).

    >>> import numpy as np, rune_jit as rune
    >>> rune.checkpoint_name(np.ones(2), "hidden").tolist()
    [1.0, 1.0]
    """
    return tree.tree_map(lambda v: bind1(name_p, v, name=str(name)), x)


def remat(f: Callable, *, policy: Policy | Callable | None = None,
          static_argnums: int | Sequence[int] = ()) -> Callable:
    """f, rematerialized in reverse mode: its intermediates are computed again in the
    backward pass instead of kept, but for those `policy` saves (see
    `dots_saveable`, `save_only_these_names`...; default: none). Arguments at
    `static_argnums` are passed as they are, not traced.

    >>> import numpy as np, rune_jit as rune, rune_jit.numpy as rnp
    >>> g = rune.grad(rune.remat(lambda x: rnp.sin(rnp.sin(x))))(np.float64(0.5))
    >>> bool(np.isclose(g, np.cos(np.sin(0.5)) * np.cos(0.5)))
    True
    """
    policy = _as_policy(policy)
    statics = as_argnums(static_argnums)

    @wraps(f)
    @api_boundary
    def g(*args):
        dyn = [a for i, a in enumerate(args) if i not in statics]
        leaves, in_tree, _ = flatten_args(tuple(dyn), "args")
        box: dict = {}

        def flat(*xs):
            it = iter(tree.unflatten(in_tree, xs))
            full = [a if i in statics else next(it) for i, a in enumerate(args)]
            outs, box["tree"], _ = flatten_args(f(*full), "output")
            return [as_value(o) for o in outs]

        body, caps = trace_closed(flat, [leaf_type(x)[0] for x in leaves])
        outs = bind(remat_p, *caps, *[as_value(x) for x in leaves], body=body, policy=policy,
                    num_captures=len(caps))
        return tree.unflatten(box["tree"], outs)

    return g


def checkpoint(f: Callable, *, prevent_cse: bool = True, policy: Policy | Callable | None = None,
               static_argnums: int | Sequence[int] = ()) -> Callable:
    """`jax.checkpoint`'s name for `remat` (`prevent_cse` is accepted: rune_jit never
    merges the recomputation with the forward pass it stands apart from).

    >>> float(rune.grad(rune.checkpoint(lambda x: rnp.sin(x) * x))(1.0).round(6))
    1.381773
    """
    return remat(f, policy=policy, static_argnums=static_argnums)


def _as_policy(policy: Policy | Callable | None) -> Policy:
    if policy is None:
        return nothing_saveable
    if isinstance(policy, Policy):
        return policy
    if not callable(policy):
        raise TypeError(f"remat: policy must be a policy or a function of (prim, *types, "
                        f"**params) -> bool, got {policy!r}")
    return Policy(getattr(policy, "__qualname__", repr(policy)), policy)
