"""How long rune_jit's functions are: the median, the 90th percentile and every function
over the limit outside the backend's kernels (issue 33's measure of readability).

    python tools/function_lengths.py [package directory, default rune_jit] [--limit 60]

A function's length is its lines from `def` to its last statement, docstring included,
nested functions counted in their own right and not in their parent's. Exit status 1 when a
function outside rune_jit/_src/backend is over the limit.
"""

from __future__ import annotations

import argparse
import ast
import statistics
import sys
from pathlib import Path


def lengths(path: Path) -> list[tuple[int, str]]:
    """(lines, qualified name) of each function in `path`, nested ones excluded from
    their parent's count."""
    out = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                nested = [n for n in ast.walk(child) if n is not child
                          and isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
                inner = sum(n.end_lineno - n.lineno + 1 for n in nested
                            if not any(m is not n and n in ast.walk(m) for m in nested))
                size = child.end_lineno - child.lineno + 1 - inner
                out.append((size, f"{prefix}{child.name}"))
                visit(child, f"{prefix}{child.name}.")
            elif isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.")
            else:
                visit(child, prefix)

    visit(ast.parse(path.read_text()), "")
    return out


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("root", nargs="?", default="rune_jit")
    parser.add_argument("--limit", type=int, default=60)
    args = parser.parse_args()
    root = Path(args.root)
    found = [(n, path, name) for path in sorted(root.rglob("*.py"))
             for n, name in lengths(path)]
    sizes = sorted(n for n, _, _ in found)
    p90 = sizes[int(0.9 * (len(sizes) - 1))]
    print(f"{len(sizes)} functions: median {statistics.median(sizes):g} lines, "
          f"p90 {p90}, longest {sizes[-1]}")
    kernels = root / "_src" / "backend"
    over = [(n, p, f) for n, p, f in found if n > args.limit]
    for n, path, name in sorted(over, reverse=True):
        where = "backend kernel" if kernels in path.parents else "OVER THE LIMIT"
        print(f"  {n:4d}  {path}:{name}  ({where})")
    return int(any(kernels not in p.parents for _, p, _ in over))


if __name__ == "__main__":
    sys.exit(main())
