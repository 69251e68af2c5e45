"""IREE's compiles of many exported programs at once: one iree-compile run costs about
0.35 s however small its module (a process, LLVM, the system linker), so the IREE tests
of a whole parametrization (test_mlir.py) compile their texts as modules of BATCH
functions, 40 in about 3 s where one at a time takes 20. A batch that fails to compile
(one of IREE's gaps in one of its functions) is compiled again without the functions its
errors name, which are compiled alone: their errors are those they would have had alone;
a batch whose errors name none (a crash) is split in halves. Which texts are batched
only changes the time: each function's outcome is its own either way."""

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


# What the IREE_GAPS of upstream.py fail on, or may: texts that have any are batched
# apart, in smaller batches (LIKELY_BATCH; 3 of the primitive table's 25 fail, none of
# the loop corpus's 15)
LIKELY_GAP = re.compile(r"math\.(erfc?|asinh?|acosh?|atanh|sinh|cosh|tanh?|cbrt|copysign|trunc"
                        r"|ctpop)\b|arith\.(truncf|extf|[su]itofp|fptosi)\b|\?x")
LIKELY_BATCH = 16


def compile_all(up, texts: Iterable[str], likely_batch: int = LIKELY_BATCH) -> None:
    """Compile every text not compiled yet, in batches: those LIKELY_GAP finds in
    batches of their own, of `likely_batch` (a gap in a batch costs compiles again)."""
    todo = [t for t in dict.fromkeys(texts) if t not in COMPILED]
    for likely, size in ((False, BATCH), (True, likely_batch)):
        group = [t for t in todo if bool(LIKELY_GAP.search(t)) == likely]
        for i in range(0, len(group), size):
            _compile(up, group[i:i + size])


def _compile(up, texts: list[str]) -> None:
    try:
        vmfb = up.iree_compile(texts[0] if len(texts) == 1 else merged(texts))
    except Exception as e:
        if len(texts) == 1:
            COMPILED[texts[0]] = e
            return
        for group in regrouped(texts, culprits(e, len(texts))):
            _compile(up, group)
        return
    for i, text in enumerate(texts):
        COMPILED[text] = up.iree_load(vmfb, "main" if len(texts) == 1 else f"f{i}")


def regrouped(texts: list[str], named: set[int]) -> list[list[str]]:
    """A failed batch's texts, to compile again: those its errors name each alone (their
    own errors), the others together; if its errors name none (a crash), in halves."""
    if not named:
        return [texts[:len(texts) // 2], texts[len(texts) // 2:]]
    rest = [t for i, t in enumerate(texts) if i not in named]
    return [[texts[i]] for i in sorted(named)] + ([rest] if rest else [])


def culprits(error: Exception, n: int) -> set[int]:
    """The functions of a merged module that iree-compile's error lines name (`merged`
    starts the file name of the i-th function's locations with `@f{i} `)."""
    lines = [ln for ln in str(error).splitlines() if "error:" in ln]
    return {int(i) for i in re.findall(r"@f(\d+) ", "\n".join(lines)) if int(i) < n}


def merged(texts: list[str]) -> str:
    """One module of the texts' functions, `@main` of the i-th renamed `@f{i}` and its
    aliases (`#map0`, `#loc0`) `#map_i_0`, `#loc_i_0`, the file names of its locations
    prefixed with `@f{i} ` (iree-compile's errors then say which function they are of)."""
    heads, bodies, tails = [], [], []
    for i, text in enumerate(texts):
        text = re.sub(r"#(map|loc)(\d+)\b", lambda m: f"#{m.group(1)}_{i}_{m.group(2)}", text)
        text = text.replace("func.func @main(", f"func.func @f{i}(", 1)
        text = re.sub(r'^(#loc_\d+_\d+ = loc\(")', rf"\1@f{i} ", text, flags=re.M)
        lines = text.rstrip("\n").split("\n")
        start = lines.index("module {")
        end = len(lines) - 1 - lines[::-1].index("}")
        heads += lines[:start]
        bodies += lines[start + 1:end]
        tails += lines[end + 1:]
    return "\n".join([*heads, "module {", *bodies, "}", *tails]) + "\n"
