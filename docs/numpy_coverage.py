"""Which of the 150 most used NumPy functions (docs/numpy-top150.tsv) rune_jit.numpy has.

    python docs/numpy_coverage.py

prints one line per row, "yes NAME" or "no NAME", and last "covered N/150". A row is
covered if rune_jit.numpy has the name, or, for a name such as `linalg.solve`, if its
submodule (rune_jit.numpy.linalg) has it. The table's own status column is a snapshot
of when it was counted; this script looks at the package as it is now.
"""

from __future__ import annotations

import csv
import sys
from pathlib import Path

TABLE = Path(__file__).resolve().parent / "numpy-top150.tsv"
sys.path.insert(0, str(TABLE.parent.parent))  # this checkout's rune_jit, run from anywhere


def rows(path: Path = TABLE) -> list[dict]:
    """The table's rows (its header is the first line that is not a # comment)."""
    lines = [line for line in path.read_text().splitlines() if line and not line.startswith("#")]
    return list(csv.DictReader(lines, delimiter="\t"))


def has(module, dotted: str) -> bool:
    for part in dotted.split("."):
        if not hasattr(module, part):
            return False
        module = getattr(module, part)
    return True


def main() -> int:
    import rune_jit.numpy as rnp

    table = rows()
    covered = 0
    for row in table:
        ok = has(rnp, row["name"])
        covered += ok
        print(f"{'yes' if ok else 'no':3} {row['name']}")
    print(f"covered {covered}/{len(table)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
