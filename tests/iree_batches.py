"""IREE's compiles of many exported programs at once: one iree-compile run costs about
0.35 s however small its module (a process, LLVM, the system linker), so the IREE tests
of a whole parametrization (test_mlir.py) compile their texts as modules of BATCH
functions, 40 in about 3 s where one at a time takes 20. A batch that fails to compile
(one of IREE's gaps in one of its functions) is split in halves until the function that
fails is compiled alone: its error is the one it would have had alone. Which texts are
batched only changes the time: each function's outcome is its own either way."""

from __future__ import annotations

import re
from typing import Callable, Iterable

BATCH = 32
# text -> its function in IREE's runtime, or the error iree-compile gave it alone
COMPILED: dict[str, Callable | Exception] = {}


def compiled(up, text: str) -> Callable:
    """IREE's function of `text`, from a batch compiled before or compiled now; raises
    iree-compile's error for it."""
    if text not in COMPILED:
        compile_all(up, [text])
    outcome = COMPILED[text]
    if isinstance(outcome, Exception):
        raise outcome
    return outcome


# What the IREE_GAPS of upstream.py fail on, or may: a text that has any compiles alone
# (a failing batch costs its halves' compiles too; batched, these would fail most)
LIKELY_GAP = re.compile(r"math\.(erfc?|asinh?|acosh?|atanh|sinh|cosh|tanh?|cbrt|copysign|trunc"
                        r"|ctpop)\b|arith\.(truncf|extf|[su]itofp|fptosi)\b|\?x")


def compile_all(up, texts: Iterable[str]) -> None:
    """Compile every text not compiled yet: in batches, but those LIKELY_GAP finds."""
    batched = []
    for text in dict.fromkeys(t for t in texts if t not in COMPILED):
        if LIKELY_GAP.search(text):
            _compile(up, [text])
        else:
            batched.append(text)
    for i in range(0, len(batched), BATCH):
        _compile(up, batched[i:i + BATCH])


def _compile(up, texts: list[str]) -> None:
    try:
        vmfb = up.iree_compile(texts[0] if len(texts) == 1 else merged(texts))
    except Exception as e:
        if len(texts) == 1:
            COMPILED[texts[0]] = e
            return
        half = len(texts) // 2
        _compile(up, texts[:half])
        _compile(up, texts[half:])
        return
    for i, text in enumerate(texts):
        COMPILED[text] = up.iree_load(vmfb, "main" if len(texts) == 1 else f"f{i}")


def merged(texts: list[str]) -> str:
    """One module of the texts' functions, `@main` of the i-th renamed `@f{i}` and its
    aliases (`#map0`, `#loc0`) `#map_i_0`, `#loc_i_0`."""
    heads, bodies, tails = [], [], []
    for i, text in enumerate(texts):
        text = re.sub(r"#(map|loc)(\d+)\b", lambda m: f"#{m.group(1)}_{i}_{m.group(2)}", text)
        text = text.replace("func.func @main(", f"func.func @f{i}(", 1)
        lines = text.rstrip("\n").split("\n")
        start = lines.index("module {")
        end = len(lines) - 1 - lines[::-1].index("}")
        heads += lines[:start]
        bodies += lines[start + 1:end]
        tails += lines[end + 1:]
    return "\n".join([*heads, "module {", *bodies, "}", *tails]) + "\n"
