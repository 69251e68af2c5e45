"""The share of the loop, seed and fuzz corpora that export to MLIR, verify upstream, and
run under IREE agreeing with the native code (issue 38; the table in docs/mlir.md), and
the reasons for the rest, grouped.

    python tools/mlir_coverage.py [loops] [seed] [fuzz] [--device local-task] [--limit N]

Each corpus is every program the native backend compiles while it runs, with one call's
arguments (tools/iree_corpora.py). Needs the `mlir` extra. Exit status 1 if IREE's
results disagree with the native ones anywhere.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import iree_corpora as corpora  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpora", nargs="*", default=list(corpora.CORPORA),
                        choices=list(corpora.CORPORA))
    parser.add_argument("--device", default="local-task")
    parser.add_argument("--limit", type=int, default=None,
                        help="only the first LIMIT programs of each corpus (a smoke test)")
    args = parser.parse_args(argv)
    from rune_jit._src.backend.iree import IreeBackend

    iree = IreeBackend(args.device)
    print(f"IREE device {args.device!r}, iree-compile flags: {' '.join(iree.flags)}")
    rows, disagreements = [], 0
    for name in args.corpora:
        calls = corpora.calls_of(name)[:args.limit]
        outcomes = [corpora.under_iree(iree, c) for c in calls]
        past, reasons = corpora.tally(outcomes)
        rows.append((name, len(outcomes), past))
        disagreements += sum(o.stage == "disagree" for o in outcomes)
        print(f"\n{name}: why programs stopped short of agreeing")
        for reason, n in reasons.most_common():
            print(f"  {n:4d}  {reason}")
    print("\n| corpus | programs | export | verify | IREE compiles | IREE runs | agrees |")
    print("|---|---|---|---|---|---|---|")
    for name, n, past in rows:
        cells = [f"{past[s]} ({100 * past[s] / max(n, 1):.0f}%)"
                 for s in ("export", "verify", "compile", "run", "agree")]
        print(f"| {name} | {n} | {' | '.join(cells)} |")
    return 1 if disagreements else 0


if __name__ == "__main__":
    sys.exit(main())
