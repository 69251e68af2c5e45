"""One seam between meaning and machine (issue 12): primitives never import a backend,
a backend owns its lowering in one table, the interpreter is a backend too, and
`import rune_jit` loads no LLVM."""

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import rune_jit as rune
from rune_jit._src.backend.cpu.codegen.complex_math import ONLY_COMPLEX
from rune_jit._src.backend.cpu.codegen.lower import ELEMENTS, LOWERINGS
from rune_jit._src.primitive import Primitive
from paths import REPO

ROOT = REPO
PACKAGE = ROOT / "rune_jit"


def _imports(path: Path) -> set[str]:
    """Every module an import statement of `path` names (top level or in a function),
    relative ones resolved."""
    package = ".".join(path.relative_to(ROOT).with_suffix("").parts[:-1])
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package
            for _ in range(node.level - 1):
                base = base.rpartition(".")[0]
            mod = node.module or ""
            full = (f"{base}.{mod}".rstrip(".") if node.level else mod)
            names.add(full)
            names.update(f"{full}.{a.name}" for a in node.names)
    return names


@pytest.mark.parametrize("layer", ["ops", "numpy"])
def test_primitives_and_numpy_never_import_llvmlite_or_a_backend(layer):
    offenders = {}
    for path in sorted((PACKAGE / layer).rglob("*.py")):
        bad = {n for n in _imports(path)
               if n.split(".")[0] == "llvmlite" or n.startswith("rune_jit._src.backend")}
        if bad:
            offenders[str(path.relative_to(ROOT))] = sorted(bad)
    assert not offenders


def test_the_import_graph_keeps_its_layers():
    done = subprocess.run([sys.executable, str(ROOT / "tools" / "import_cycles.py"),
                           str(PACKAGE)], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout


def test_import_loads_no_llvm_and_the_interpreter_runs_jit_without_it():
    code = """
import json, sys, numpy as np, rune_jit as rune, rune_jit.numpy as rnp
from rune_jit._src.backend import stats
imported = "llvmlite" in sys.modules
f = rune.jit(lambda xs: rune.scan(lambda c, x: (c * 0.5 + rnp.sin(x),) * 2, 0.0, xs)[0])
g = rune.jit(rune.grad(lambda x: rnp.sum(rnp.tanh(x) ** 2)))
out = dict(f=float(f(np.linspace(0, 1, 5))), g=g(np.ones(2)).tolist(), imported=imported,
           compiled=stats["compiled"], llvm="llvmlite" in sys.modules)
try:
    f.lower(np.ones(3)).llvm_ir
except NotImplementedError as e:
    out["no_llvm_ir"] = str(e)
print(json.dumps(out))
"""
    env = dict(os.environ, RUNE_JIT_BACKEND="interpret")
    out = json.loads(subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                                    text=True, check=True).stdout)
    c = 0.0
    for x in np.linspace(0, 1, 5):
        c = c * 0.5 + np.sin(x)
    t = np.tanh(1.0)
    assert out["f"] == pytest.approx(c, rel=1e-15)
    assert out["g"] == pytest.approx([2 * t * (1 - t * t)] * 2, rel=1e-15)
    assert (out["imported"], out["compiled"], out["llvm"]) == (False, 0, False)
    assert "RUNE_JIT_BACKEND=interpret" in out["no_llvm_ir"]


def test_every_primitive_has_a_cpu_lowering():
    missing = []
    for name, prim in sorted(Primitive.registry.items()):
        if prim in ONLY_COMPLEX:  # rewritten into real parts before lowering
            continue
        if "elementwise" in prim.traits:
            if prim not in ELEMENTS and "element" not in prim.rules:
                missing.append(name)
        elif prim not in LOWERINGS:
            missing.append(name)
    assert not missing, f"no CPU lowering for {missing}"


def test_rule_slots_and_traits_are_declared():
    prim = Primitive("test_seam_slots")
    try:
        with pytest.raises(ValueError, match="no rule slot 'jvpp'"):
            prim.def_rule("jvpp", lambda *a: None)
        with pytest.raises(ValueError, match="unknown traits \\['elementwize'\\]"):
            Primitive("test_seam_traits", traits=frozenset({"elementwize"}))
    finally:
        Primitive.registry.pop("test_seam_slots", None)
        Primitive.registry.pop("test_seam_traits", None)


def test_an_elementwise_primitive_with_only_a_portable_element_rule_compiles():
    """Adding an elementwise op needs its meaning and its element rule: no CPU code."""
    from rune_jit._src.ops import elementwise as ew
    from rune_jit._src.trace import bind1

    prim = Primitive("test_seam_softplus", traits=frozenset({"elementwise"}))
    try:
        prim.def_rule("shape", lambda x: [x])
        prim.def_rule("impl", lambda x: [np.logaddexp(0.0, x)])
        prim.def_rule("element", lambda e, x: e.add(e.max(x, e.const(x, 0.0)), e.log1p(
            e.exp(e.neg(e.abs(x))))))
        x = np.linspace(-30.0, 30.0, 13)
        f = rune.jit(lambda v: ew.mul(bind1(prim, v), 2.0))
        np.testing.assert_allclose(f(x), 2 * np.logaddexp(0.0, x), rtol=1e-15)
        assert "test_seam_softplus" not in f.lower(x).llvm_ir  # inlined element by element
    finally:
        Primitive.registry.pop("test_seam_softplus")


def test_a_lowering_failure_names_the_primitive():
    prim = Primitive("test_seam_unlowered")
    try:
        prim.def_rule("shape", lambda x: [x])
        prim.def_rule("impl", lambda x: [x])
        from rune_jit._src.trace import bind1

        with pytest.raises(NotImplementedError, match="no CPU lowering rule for "
                                                     "test_seam_unlowered"):
            rune.jit(lambda v: bind1(prim, v) * 2.0)(np.ones(3))
    finally:
        Primitive.registry.pop("test_seam_unlowered")


# ------------------------------------------------------------- errors point at the user's line


def _mistakes():
    import rune_jit.numpy as rnp

    def carry_mismatch(x):
        return rune.scan(lambda c, r: (c * 1.0, None), np.int32(0), x)[0]

    def if_on_tracer(x):
        if x[0] > 0:
            return x
        return -x

    def matmul_shapes(x):
        return rnp.matmul(x, np.ones((4, 2)))

    return [carry_mismatch, if_on_tracer, matmul_shapes]


def _frames(f) -> tuple[int, int]:
    import traceback

    with pytest.raises(Exception) as info:
        rune.jit(f)(np.ones(3))
    stack = traceback.extract_tb(info.value.__traceback__)
    ours = sum(1 for fr in stack if str(Path(fr.filename).resolve()).startswith(str(PACKAGE)))
    return ours, len(stack)


@pytest.mark.parametrize("index", range(3))
def test_tracebacks_of_common_mistakes_show_the_users_frames(index, monkeypatch):
    f = _mistakes()[index]
    ours, total = _frames(f)
    assert ours <= 2 and total - ours >= 2  # the call, and the user's line inside f
    monkeypatch.setenv("RUNE_JIT_TRACEBACK", "full")
    assert _frames(f)[0] > 5


def test_errors_name_the_users_line():
    import rune_jit.numpy as rnp

    def solve(a):
        return rnp.linalg.solve(a, np.ones(2))  # the line the errors name

    line = solve.__code__.co_firstlineno + 1
    where = f"backend/test_backend_seam.py:{line} (solve)"
    for f in (rune.jit(solve), rune.jit(rune.grad(lambda a: rnp.sum(solve(a))))):
        with pytest.raises(np.linalg.LinAlgError) as info:
            f(np.zeros((2, 2)))  # compiled code fails: a note names the line
        assert any(where in n for n in info.value.__notes__), info.value.__notes__
    prim = Primitive("test_seam_nojvp")
    try:
        prim.def_rule("shape", lambda x: [x])
        prim.def_rule("impl", lambda x: [x])
        from rune_jit._src.trace import bind1

        def uses(x):
            return rnp.sum(bind1(prim, x))  # the line the pass's error names

        with pytest.raises(NotImplementedError, match="no jvp rule") as info:
            rune.grad(uses)(np.ones(2))
        line = uses.__code__.co_firstlineno + 1
        assert any(f"backend/test_backend_seam.py:{line} (uses)" in n for n in info.value.__notes__)
    finally:
        Primitive.registry.pop("test_seam_nojvp")


def test_the_ir_and_jitted_functions_read_well_at_the_prompt():
    def f(x):
        return x * 2.0

    region = rune.make_ir(f)(np.ones(3, np.float32))
    assert repr(region) == str(region) and "float32[3]" in repr(region)
    assert region._repr_html_().startswith("<pre>{ lambda a:float32[3]")
    assert "function" in repr(rune.jit(f)) and "f at" in repr(rune.jit(f))
