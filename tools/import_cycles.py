"""Print the import cycles among rune_jit's modules, function-local imports counted.

    python tools/import_cycles.py [package directory, default rune_jit]

Each cycle is a strongly connected component of the graph "module A imports module B"
(an `import` anywhere in A: at the top, or inside a function). The layering holds when
no cycle passes through rune_jit/_src/backend, and none joins rune_jit/_src/ops to another part
of the package (primitives whose rules use each other, within ops, may: a broadcast's
transpose is a sum, and a sum's is a broadcast). Exit status 1 if one does.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path, root: Path, modules: set[str]) -> set[str]:
    """The rune_jit modules `path` imports, resolved to modules (not packages' names)."""
    me = module_name(path, root)
    package = me if path.name == "__init__.py" else me.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package
            for _ in range(node.level - 1):
                base = base.rpartition(".")[0]
            base = (f"{base}.{node.module}" if node.module else base) if node.level else (
                node.module or "")
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base
                       for a in node.names]
        else:
            continue
        found.update(t for t in targets if t in modules and t != me)
    return found


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan's, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        top = stack.pop()
                        on_stack.discard(top)
                        component.append(top)
                        if top == node:
                            break
                    if len(component) > 1:
                        out.append(sorted(component))
    return out


def breaks_layers(component: list[str], package: str) -> bool:
    ops = [m.startswith(f"{package}._src.ops") for m in component]
    return (any(m.startswith(f"{package}._src.backend") for m in component)
            or (any(ops) and not all(ops)))


# The layers, each a list of module prefixes under rune_jit (the first that matches
# names a module's layer); docs/design.md lists the arrows between them that exist, and
# tests/project/test_design_doc.py keeps that list equal to what this finds.
LAYERS = {
    "faces": [""],  # the public modules: everything outside _src
    "libraries": ["_src." + m for m in (
        "numpy", "scipy", "random", "random_distributions", "lax", "nn", "initializers",
        "optimizers", "stax", "linalg", "linalg_array_api", "special", "sparse_linalg",
        "numpy_extras", "ufunc", "ufunc_reduce", "vectorize", "dtype_vocabulary", "jax_dtypes",
        "array_type", "flatten_util", "typing", "devices", "staging_names",
        "absent", "moved", "segment")],
    "user api": ["_src." + m for m in (
        "api", "jit", "check", "checkify", "transforms", "control_flow", "debug", "tour")],
    "call path": ["_src." + m for m in ("call", "platforms", "target_cpu", "version")],
    "pytrees": ["_src." + m for m in ("tree", "tree_util", "tree_keys", "tree_nodes")],
    "ops": ["_src.ops"],
    "passes": ["_src.passes"],
    "backend": ["_src.backend"],
    "core": ["_src." + m for m in (
        "trace", "ir", "primitive", "ad_util", "source_info", "dtypes", "errors", "config",
        "tracebacks", "interpret", "eager", "options", "values", "")],
}


def layer(module: str, package: str) -> str:
    """The layer of `module` (the longest matching prefix of LAYERS)."""
    rest = module[len(package) + 1:] if module != package else ""
    best, size = "faces", -1
    for name, prefixes in LAYERS.items():
        for p in prefixes:
            if (p == "" or rest == p or rest.startswith(p + ".")) and len(p) > size:
                best, size = name, len(p)
    return best


def arrows(graph: dict[str, set[str]], package: str) -> list[str]:
    """"A -> B" for each pair of layers where a module of A imports one of B."""
    found = {(layer(a, package), layer(b, package)) for a, bs in graph.items() for b in bs}
    return sorted(f"{a} -> {b}" for a, b in found if a != b)


def main() -> int:
    root = Path(sys.argv[1] if len(sys.argv) > 1 else "rune_jit").resolve()
    paths = sorted(root.rglob("*.py"))
    modules = {module_name(p, root) for p in paths}
    graph = {module_name(p, root): imports(p, root, modules) for p in paths}
    found = cycles(graph)
    bad = False
    for component in found:
        layered = breaks_layers(component, root.name)
        bad |= layered
        print(f"cycle of {len(component)} modules{' (breaks the layering)' if layered else ''}:")
        for m in component:
            print(f"  {m}")
    if not found:
        print("no import cycles")
    print("arrows between layers:")
    for arrow in arrows(graph, root.name):
        print(f"  {arrow}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
