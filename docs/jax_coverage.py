"""How much of JAX's public vocabulary resolves under rune_jit.

Reads docs/jax-names-census.tsv (a census of the JAX names twelve public libraries use:
name, uses, libraries), maps each `jax.X` to `rune_jit.X`, and prints the share of the
uses that resolve, the count of the 300 most used names present, and a table by module.
`--table` prints only the markdown table docs/porting-from-jax.md carries; `--missing`
lists the names that do not resolve, most used first.

    python docs/jax_coverage.py
"""

from __future__ import annotations

import argparse
import csv
import importlib
import warnings
from collections import defaultdict
from pathlib import Path
from typing import NamedTuple

CENSUS = Path(__file__).with_name("jax-names-census.tsv")


class Name(NamedTuple):
    name: str
    uses: int
    libraries: int


def census() -> list[Name]:
    """The census's rows, most used first."""
    with open(CENSUS, newline="") as f:
        rows = [Name(r["name"], int(r["uses"]), int(r["libraries"]))
                for r in csv.DictReader(f, delimiter="\t")]
    return sorted(rows, key=lambda r: -r.uses)


def resolves(jax_name: str) -> bool:
    """Whether `jax.a.b.c` exists as `rune_jit.a.b.c` (a module or an attribute)."""
    parts = ["rune_jit", *jax_name.split(".")[1:]]
    for split in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:split]))
        except ImportError:
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("error", DeprecationWarning)  # an internal module's old name
            try:
                for attr in parts[split:]:
                    obj = getattr(obj, attr)
            except (AttributeError, DeprecationWarning):
                return False
        return True
    return False


def module_of(jax_name: str) -> str:
    return jax_name.rsplit(".", 1)[0]


def coverage(rows: list[Name]) -> dict:
    present = {r.name: resolves(r.name) for r in rows}
    by_module: dict = defaultdict(lambda: [0, 0, 0, 0])  # names, present, uses, uses present
    for r in rows:
        m = by_module[module_of(r.name)]
        m[0] += 1
        m[1] += present[r.name]
        m[2] += r.uses
        m[3] += r.uses * present[r.name]
    return {"present": present, "by_module": dict(by_module),
            "uses": sum(r.uses for r in rows),
            "uses_present": sum(r.uses for r in rows if present[r.name]),
            "top300": sum(present[r.name] for r in rows[:300])}


def table(cov: dict) -> str:
    lines = ["| JAX module | names | present | share of uses |", "|---|---|---|---|"]
    for mod, (n, p, u, up) in sorted(cov["by_module"].items(), key=lambda kv: -kv[1][2]):
        lines.append(f"| `{mod}` | {n} | {p} | {100 * up / u:.1f}% |")
    lines.append(f"| all | {sum(m[0] for m in cov['by_module'].values())} "
                 f"| {sum(m[1] for m in cov['by_module'].values())} "
                 f"| {100 * cov['uses_present'] / cov['uses']:.1f}% |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--table", action="store_true", help="print only the markdown table")
    ap.add_argument("--missing", action="store_true", help="list the names that do not resolve")
    args = ap.parse_args()
    rows = census()
    cov = coverage(rows)
    if args.table:
        print(table(cov))
        return
    if args.missing:
        for r in rows:
            if not cov["present"][r.name]:
                print(f"{r.uses}\t{r.name}")
        return
    print(f"uses that resolve: {cov['uses_present']} of {cov['uses']} "
          f"({100 * cov['uses_present'] / cov['uses']:.1f}%)")
    print(f"top-300 names present: {cov['top300']} of 300")
    print(table(cov))


if __name__ == "__main__":
    main()
