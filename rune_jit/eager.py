"""How a loop called outside jit runs: as its backend chooses (compiled as a unit by the
CPU backend, so a loop typed at the prompt runs at native speed).

Primitives reach this hook, not a backend: a backend installs `run_loop` when selected
(rune_jit.backend), so that primitives never import one. Until then, or with no backend
installed, a loop runs its interpreter rule.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

Interpreter = Callable[..., list]


def _interpret(prim: Any, interpret: Interpreter, args: Sequence[Any], params: dict) -> list:
    return interpret(*args, **params)


run_loop: Callable[[Any, Interpreter, Sequence[Any], dict], list] = _interpret


def install(runner: Callable[[Any, Interpreter, Sequence[Any], dict], list]) -> None:
    global run_loop
    run_loop = runner
