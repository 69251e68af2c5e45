"""Run-time checks (docs/debugging.md): `check`, which fails the call with a message made
of the failing values, and `checkify`, which turns such a failure into an error value
(JAX's `jax.experimental.checkify` spelling)."""

from __future__ import annotations

import functools
import string
from typing import Any, Callable

import numpy as np

from . import tree
from .errors import CheckError
from .ops.check import check_flat, checks_off, format_message
from .trace import Tracer, current, type_of_value
from .tracebacks import api_boundary

user_checks = frozenset({"user"})  # the failures checkify turns into values: check's


@api_boundary
def check(pred: Any, msg: str, *fmt_args: Any, **fmt_kwargs: Any) -> None:
    """Fail the call with `CheckError(msg.format(*fmt_args, **fmt_kwargs))` unless `pred`
    (a bool scalar, per lane under vmap) holds, when the program runs: inside jit and loop
    steps too, where the message also names the lane under vmap and the step of each
    enclosing loop. Under grad and jvp it checks the forward values.

    >>> def safe_log(x):
    ...     rune.check(x > 0, "log of {}", x)
    ...     return rnp.log(x)
    >>> float(rune.jit(safe_log)(np.e))
    1.0
    >>> try:
    ...     rune.vmap(rune.jit(safe_log))(np.array([1.0, -2.0]))
    ... except rune.CheckError as err:
    ...     print(err)
    log of -2.0, in lane 1
    """
    if not isinstance(msg, str):
        raise TypeError(f"rune_jit.check: the message must be a str, got {type(msg).__name__}")
    p = _predicate(pred)
    leaves, treedef = tree.flatten((fmt_args, fmt_kwargs))
    leaves = [x if isinstance(x, Tracer) else _value(x) for x in leaves]
    _match(msg, treedef, leaves, len(fmt_args), set(fmt_kwargs))
    if not isinstance(p, Tracer) and bool(p):
        return  # holds now: nothing to check when the program runs
    check_flat(p, leaves, msg=msg, treedef=treedef)


def _predicate(pred: Any) -> Any:
    p = pred if isinstance(pred, Tracer) else np.asarray(pred)
    t = type_of_value(p)
    if t.dtype != np.dtype(bool) or t.shape != ():
        raise TypeError(f"rune_jit.check: the predicate must be a bool scalar (per lane under "
                        f"vmap), got {t.dtype.name} of shape {t.shape}")
    return p


def _value(x: Any) -> np.ndarray:
    a = np.asarray(x)
    if a.dtype.kind not in "biufc":
        raise TypeError(f"rune_jit.check: the values formatted into the message must be "
                        f"arrays or numbers, got {type(x).__name__}")
    return a


def _match(msg: str, treedef: tree.PyTreeDef, leaves: list, n_args: int, names: set) -> None:
    """Raise TypeError, when the call is traced, unless `msg` uses every value given and
    no other, and formats values of their types."""
    fields = [f for _, f, _, _ in string.Formatter().parse(msg) if f is not None]
    roots = [f.split(".")[0].split("[")[0] for f in fields]
    auto = sum(1 for r in roots if r == "")
    used = {int(r) for r in roots if r.isdigit()} | set(range(auto))
    named = {r for r in roots if r and not r.isdigit()}
    if used != set(range(n_args)) or named != names:
        raise TypeError(f"rune_jit.check: the message {msg!r} does not match its values: it "
                        f"uses {len(used)} positional and {sorted(named)} named, the call "
                        f"gives {n_args} positional and {sorted(names)} named")
    examples = [np.zeros(t.shape, t.dtype)[()] for t in map(type_of_value, leaves)]
    try:
        format_message(msg, treedef, examples)
    except (ValueError, TypeError, IndexError, KeyError, AttributeError) as e:
        raise TypeError(f"rune_jit.check: the message {msg!r} cannot format its values: "
                        f"{e}") from None


class Error:
    """What `checkify(f)` returns beside f's result: the failure of a check, or none.

    >>> err, _ = checkify(lambda x: rune.check(x > 0, "x = {}", x))(-1.0)
    >>> err.get()
    'x = -1.0'
    """

    def __init__(self, failure: CheckError | None = None):
        self._failure = failure

    def get(self) -> str | None:
        """The failure's message, or None if every check held."""
        return None if self._failure is None else str(self._failure)

    def get_exception(self) -> CheckError | None:
        """The failure as an exception, or None."""
        return self._failure

    def throw(self) -> None:
        """Raise the failure (a `rune_jit.CheckError`), if there is one."""
        if self._failure is not None:
            raise self._failure

    def __repr__(self) -> str:
        return f"Error({self.get()!r})"


def checkify(f: Callable, errors: frozenset = user_checks) -> Callable:
    """`f` returning `(err, out)`: the failure of its first failing check as an `Error`
    instead of raised, and its result, computed with the checks off when one failed.
    Call it outside jit and other transformations (`checkify(jit(f))`); f may use them.

    >>> def f(x):
    ...     rune.check(x < 10, "x = {} is too large", x)
    ...     return x * 2
    >>> err, out = checkify(rune.jit(f))(np.float64(12.0))
    >>> err.get(), float(out)
    ('x = 12.0 is too large', 24.0)
    >>> err, out = checkify(f)(1.0)
    >>> err.get() is None, float(out)
    (True, 2.0)
    """
    if not errors <= user_checks:
        raise ValueError(f"rune_jit checkify: errors must be a subset of user_checks (the "
                         f"checks of rune_jit.check), got {sorted(errors)}")

    @functools.wraps(f)
    def checked(*args: Any, **kwargs: Any) -> tuple[Error, Any]:
        if current() is not None:
            raise NotImplementedError(
                "rune_jit checkify: called inside a traced function (jit, grad, vmap, a loop "
                "step); call it outside them, as checkify(jit(f)), with f using them")
        try:
            return Error(), f(*args, **kwargs)
        except CheckError as err:
            with checks_off():
                return Error(err), f(*args, **kwargs)

    return checked
