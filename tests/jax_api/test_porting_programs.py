"""Programs written for JAX, as library code is written, run under rune_jit with only
their imports renamed (`jax` -> `rune_jit`), eager and jitted as they are written, and
give JAX's results (when JAX is installed) and their own checks (always).

The programs are tests/porting/*.py; each has a `main()` returning a pytree of arrays."""

import re

import numpy as np
import pytest

import rune_jit as rune
from paths import TESTS

PROGRAMS = sorted(p.stem for p in (TESTS / "porting").glob("*.py"))
IMPORT = re.compile(r"^(\s*)(import|from)\s+jax\b(.*)$")


def renamed(source: str) -> str:
    """The program with its imports pointed at rune_jit's same-named modules."""
    def rename(line: str) -> str:
        m = IMPORT.match(line)
        if not m:
            return line
        indent, kind, rest = m.groups()
        if kind == "import" and not rest.strip():
            return f"{indent}import rune_jit as jax"
        return f"{indent}{kind} rune_jit{rest}"
    return "\n".join(rename(line) for line in source.splitlines())


def run(source: str, name: str):
    namespace: dict = {"__name__": f"porting_{name}"}
    exec(compile(source, f"tests/porting/{name}.py", "exec"), namespace)
    return namespace["main"]()


def source_of(name: str) -> str:
    return (TESTS / "porting" / f"{name}.py").read_text()


def test_renaming_touches_imports_only():
    src = "import jax\nimport jax.numpy as jnp\nfrom jax import lax\nx = jax.jit(f)\n"
    assert renamed(src) == ("import rune_jit as jax\nimport rune_jit.numpy as jnp\n"
                            "from rune_jit import lax\nx = jax.jit(f)")


@pytest.mark.parametrize("name", PROGRAMS)
def test_program_runs_renamed(name):
    got = run(renamed(source_of(name)), name)
    leaves = rune.tree_util.tree_leaves(got)
    assert leaves and all(isinstance(x, (np.ndarray, np.generic)) for x in leaves)


@pytest.mark.slow  # JAX's compiles take most of its time
@pytest.mark.parametrize("name", PROGRAMS)
def test_program_gives_jaxs_results(name):
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    got = run(renamed(source_of(name)), name)
    if "JAX_CANNOT" in source_of(name):
        with pytest.raises(Exception):  # the program says why; rune_jit's own checks ran
            run(source_of(name), name)
        return
    want = jax.tree_util.tree_map(np.asarray, run(source_of(name), name))
    assert rune.tree_util.tree_structure(got) == rune.tree_util.tree_structure(want)
    for g, w in zip(rune.tree_util.tree_leaves(got), rune.tree_util.tree_leaves(want)):
        np.testing.assert_allclose(g, w, rtol=1e-7, atol=1e-9)

def test_a_numpy_table_indexed_by_a_loop_row_names_the_fix():
    """What does not port: an eager call whose loop step indexes an array computed
    eagerly (a NumPy array) with a traced row. JAX's arrays take a traced index; NumPy's
    cannot, so the error says to index `rnp.asarray(table)` (docs/porting-from-jax.md)."""
    table = rune.nn.log_softmax(np.arange(6.0).reshape(2, 3))  # computed now: NumPy's
    step = lambda c, o: (c + table[:, o], None)  # noqa: E731
    with pytest.raises(rune.ConcretizationError, match=r"rnp\.asarray\(table\)\[i\]"):
        rune.scan(step, np.zeros(2), np.array([0, 2]))
    fixed = lambda c, o: (c + rune.numpy.asarray(table)[:, o], None)  # noqa: E731
    np.testing.assert_allclose(rune.scan(fixed, np.zeros(2), np.array([0, 2]))[0],
                               table[:, 0] + table[:, 2])
    np.testing.assert_allclose(rune.jit(lambda t: rune.scan(
        lambda c, o: (c + t[:, o], None), np.zeros(2), np.array([0, 2]))[0])(table),
        table[:, 0] + table[:, 2])
