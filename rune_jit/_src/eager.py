"""How a loop called outside jit runs: as its backend chooses (compiled as a unit by the
CPU backend, so a loop typed at the prompt runs at native speed).

Primitives reach this hook, not a backend: a backend installs `run_loop` when selected
(rune_jit.backend), so that primitives never import one. Until then, or with no backend
installed, a loop runs its interpreter rule.

Calls of `scan`, `iterate` and transformed functions outside jit first ask the eager
caches (rune_jit/_src/call/eager_cache.py, which installs `cached` and `cached_transformation`
when imported) for the program they would trace; NOT_CACHED sends them their own way.
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


NOT_CACHED = object()


def _not_cached(*args: Any, **kwargs: Any) -> Any:
    return NOT_CACHED


cached: Callable[..., Any] = _not_cached  # eager_cache.call
cached_transformation: Callable[..., Any] = _not_cached  # eager_cache.transformed


def install_cache(call: Callable[..., Any], transformed: Callable[..., Any]) -> None:
    global cached, cached_transformation
    cached, cached_transformation = call, transformed
