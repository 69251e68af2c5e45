"""MLIR export (docs/mlir.md): every program of the loop corpus, the seed examples (the
tour, the docs pages), the primitive table and the fuzz corpus as MLIR text, parsed,
verified and canonicalized by upstream MLIR (the bindings IREE's compiler bundles: the
`mlir` extra); and IREE compiling and running the same text, its results compared with
the native code's. A program that has a primitive with no MLIR form (callbacks, LAPACK's
decompositions, sort) must raise NotImplementedError naming it: found by walking its IR,
not by a list of tests."""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import io
import re
import sys

import numpy as np
import pytest

import rune_jit as rune
import rune_jit.numpy as rnp
from rune_jit._src.backend.cpu import runtime
from rune_jit._src.backend.cpu.codegen.complex_pairs import holds_complex
from rune_jit._src.backend.cpu.codegen.pipeline import before_lowering
from rune_jit._src.backend.mlir import module_text
from rune_jit._src.backend.mlir.emit import RULES
from rune_jit._src.ir import Region
from rune_jit._src.primitive import Primitive

import fuzz_programs as fp
import iree_batches
import primitive_cases as pc
from loop_helpers import walk
from paths import REPO, TESTS


def upstream():
    """The verifier and IREE (skips the test where the `mlir` extra is not installed)."""
    pytest.importorskip("iree.compiler")
    pytest.importorskip("iree.runtime")
    from rune_jit._src.backend.mlir import upstream as up

    return up


def load(path: str):
    """A module of tests/ by its path (the loop tests' programs), under a name of its own."""
    spec = importlib.util.spec_from_file_location(f"mlir_corpus_{path.replace('/', '_')}",
                                                  TESTS / path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# ------------------------------------------------------------- the corpora

transforms_module = load("loops/test_loop_transforms.py")
rules_module = load("loops/test_loop_rules.py")
X, LANES = transforms_module.X, transforms_module.LANES
TRANSFORMS = {
    "plain": lambda f: (f, X),
    "jvp": lambda f: (lambda x: rune.jvp(f, (x,), (np.ones(4),)), X),
    "grad": lambda f: (rune.value_and_grad(f), X),
    "vmap": lambda f: (rune.vmap(f), LANES),
    "vmap of grad": lambda f: (rune.vmap(rune.grad(f)), LANES),
}
LOOP_CORPUS = {f"{loop} {how}": (lambda f=f, t=t: t(f))
               for loop, (f, _) in transforms_module.LOOPS.items()
               for how, t in TRANSFORMS.items()}
SCAN_XS = np.linspace(0.0, 1.0, 12).reshape(6, 2)
LOOP_CORPUS.update({
    f"scan rule {name}": (lambda p=p, name=name: (p, SCAN_XS if name.startswith("vmap")
                                                  else SCAN_XS[:, 0]))
    for name, p in rules_module.SCAN_PROGRAMS.items()})
LOOP_CORPUS.update({
    f"iterate rule {name}": (lambda p=p, name=name: (p(50), np.array([3.0, 40.0])
                                                     if name.startswith("vmap") else 3.0))
    for name, p in rules_module.ITERATE_PROGRAMS.items()})


def fuzz_case(seed: int, grad: bool):
    prog = fp.generate(seed)
    f = prog.build()
    if grad:
        floats = tuple(i for i, (d, _) in enumerate(prog.args) if d.kind == "f")
        f = rune.grad(prog.scalar(f), argnums=floats)
    return f, prog.inputs(0), (2e-5 if prog.any_f32 else 1e-9)


def primitive_case(case: pc.Case):
    return case.fn, case.draw(np.random.default_rng(0), case.largest(), case.dtype)


# ------------------------------------------------------------- checks


def without_form(region: Region) -> set[str]:
    """Why the program has no MLIR text: its primitives with no MLIR rule, and "unsized"
    if loops with lanes read or write the tapes of a while_loop without max_steps."""
    missing = set()
    for eqn in walk(region):
        if eqn.prim not in RULES:
            missing.add(eqn.prim.name)
        tapes = any(a.type.unsized for a in (*eqn.inputs, *eqn.outputs))
        laned = eqn.params.get("lanes") or (eqn.params.get("counted") and eqn.inputs[0].type.shape)
        if tapes and (laned or any(v.type.unsized for v in eqn.outputs[
                eqn.params["num_carry"]:] if eqn.prim.name == "scan")):
            missing.add("unsized")
    return missing


def lowered(f, args):
    """jit(f).lower(*args), from this one line: an equation of rune_jit's own functions
    (the primitive table's `rnp.sqrt`) is located at the first frame outside rune_jit,
    this line, so the text compiled ahead (`compiled_ahead`) is the text a test finds
    compiled (iree_batches.COMPILED is keyed by the text, its locations included)."""
    return rune.jit(f).lower(*args)


def exports(f, args) -> str | None:
    """The MLIR text of jit(f) at `args`, verified upstream; None if the program has what
    MLIR has no form for, and then the error names it."""
    up = upstream()
    try:
        stages = lowered(f, args)
    except Exception as e:  # no program to show (forward mode of a custom_vjp): the call
        with pytest.raises(type(e)):  # raises the same error
            rune.jit(f)(*args)
        return None
    missing = without_form(stages.region)
    if holds_complex(rune.make_jaxpr(f)(*args)):  # the CPU backend's region holds pairs
        missing.add("complex")
    if missing:
        with pytest.raises(NotImplementedError) as info:
            stages.mlir
        names = {m if m != "unsized" else "while_loop without max_steps" for m in missing}
        assert any(m in str(info.value) for m in names), (str(info.value), missing)
        return None
    text = stages.mlir
    up.verify(text)
    return text


def same_bits_type(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """IREE returns signless integers as signed ones: read them as the dtype rune_jit
    gives."""
    if got.dtype != want.dtype and got.dtype.itemsize == want.dtype.itemsize \
            and got.dtype.kind in "iu" and want.dtype.kind in "iu":
        return got.view(want.dtype)
    return got


def agrees_with_iree(f, args, rtol: float, ahead: bool = False) -> str:
    """IREE runs the exported text and agrees with the native code (values, or both
    raise); -> "agree", "raise", "no MLIR" or the name of the IREE gap that stopped it.
    `ahead`: the text was compiled in a batch before (`compiled_ahead`), not alone now."""
    up = upstream()
    text = exports(f, args)
    if text is None:
        return "no MLIR"
    assert not ahead or text in iree_batches.COMPILED, "not the text compiled ahead"
    try:
        want = [np.asarray(w) for w in rune.tree.leaves(rune.jit(f)(*args))]
    except Exception as e:  # then IREE must fail too, with rune_jit's message
        want = e
    try:
        run = iree_batches.compiled(up, text)
    except Exception as e:  # iree-compile's error: one of IREE's gaps, never anything else
        gap = up.iree_gap(e)
        assert gap is not None, f"iree-compile failed:\n{str(e)[:3000]}\n{text}"
        return gap
    if isinstance(want, Exception):
        with pytest.raises((ValueError, RuntimeError), match="rune_jit"):
            run(*args)
        return "raise"
    try:
        got = run(*args)
    except RuntimeError as e:  # IREE's runtime failing where rune_jit does not
        gap = up.iree_gap(e)
        assert gap is not None, f"IREE's runtime failed:\n{e}\n{text}"
        return gap
    assert len(got) == len(want)
    for g, w in zip(got, want):
        g = same_bits_type(g, w)
        assert g.shape == w.shape, (g.shape, w.shape)
        np.testing.assert_allclose(g, w, rtol=rtol, atol=rtol * 1e-3, equal_nan=True,
                                   err_msg=f"IREE disagrees with the native code on\n{text}")
    return "agree"


# ------------------------------------------------------------- export and verify


@pytest.mark.parametrize("name", list(LOOP_CORPUS))
def test_loop_corpus_exports_and_verifies(name):
    f, x = LOOP_CORPUS[name]()
    assert exports(f, (x,)) is not None


@pytest.mark.parametrize("case", pc.CASES, ids=[c.id for c in pc.CASES])
def test_primitive_table_exports_and_verifies(case):
    exports(*primitive_case(case))


@pytest.mark.slow
@pytest.mark.parametrize("case", pc.CASES, ids=[c.id for c in pc.CASES])
def test_primitive_table_exports_and_verifies_in_every_dtype(case):
    for dtype in case.dtypes:
        exports(case.fn, case.draw(np.random.default_rng(0), case.largest(), dtype))


FUZZ_SEEDS = range(200)  # the quick run samples 60 of the 400 (conftest.py)


@pytest.mark.parametrize("seed", FUZZ_SEEDS)
@pytest.mark.parametrize("grad", [False, True], ids=["value", "grad"])
def test_fuzz_programs_export_and_verify(seed, grad):
    f, args, _ = fuzz_case(seed, grad)
    exports(f, args)


def recorded_programs(run) -> list[Region]:
    """Every program compiled while `run()` runs, after the CPU backend's passes."""
    seen: list[Region] = []
    prepare = runtime.prepare

    def recording(region):
        seen.append(region)
        return prepare(region)
    with pytest.MonkeyPatch.context() as m:
        m.setenv("RUNE_JIT_SAVE_TRACES", "0")  # every program traced and compiled anew
        m.setattr(runtime, "prepare", recording)
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            run()
    return [before_lowering(r) for r in seen]


def check_all_export(regions: list[Region]) -> int:
    """Export and verify every region that has an MLIR form; -> how many did."""
    up = upstream()
    done = 0
    for region in regions:
        if without_form(region):
            with pytest.raises(NotImplementedError):
                module_text(region)
            continue
        up.verify(module_text(region))
        done += 1
    return done


def test_the_tours_programs_export_and_verify():
    from rune_jit._src import tour

    regions = recorded_programs(tour.run_steps)
    # every program but those that print from compiled code (a callback into Python)
    assert set().union(*map(without_form, regions)) <= {"debug_callback"}
    assert check_all_export(regions) >= 20


DOC_PAGES = sorted(p.name for p in (REPO / "docs").glob("*.md")
                   if p.name != "loops.md" and "```python" in p.read_text())


@pytest.mark.slow
@pytest.mark.parametrize("page", DOC_PAGES)
def test_the_docs_programs_export_and_verify(page):
    blocks = re.findall(r"```python\n(.*?)```", (REPO / "docs" / page).read_text(), re.S)
    registered = set(Primitive.registry)

    def run():
        namespace: dict = {}
        with np.printoptions(suppress=True):
            for i, code in enumerate(blocks):
                exec(compile(code, f"{page} block {i}", "exec"), namespace)
    try:
        regions = recorded_programs(run)
    finally:
        for name in set(Primitive.registry) - registered:
            del Primitive.registry[name]
    check_all_export(regions)


# ------------------------------------------------------------- IREE as a second compiler

OUTCOMES = ("agree", "raise", "no MLIR")
QUICK_LOOPS = ["scan plain", "scan reverse grad", "iterate vmap", "iterate vmap of grad",
               "cond grad", "scan in iterate vmap", "root jvp", "remat in scan grad"]


SLOW_FUZZ_SEEDS = range(4, 32)  # the quick run checks seeds 0 to 3
# the programs of the slow IREE tests, by corpus: (f, args) each
IREE_CORPORA = {
    "loops": lambda: [(f, (x,)) for f, x in (make() for make in LOOP_CORPUS.values())],
    "fuzz": lambda: [fuzz_case(s, g)[:2] for s in SLOW_FUZZ_SEEDS for g in (False, True)],
    "primitives": lambda: [primitive_case(case) for case in pc.CASES],
}


@functools.cache
def compiled_ahead(corpus: str) -> None:
    """Every program of an IREE corpus exported and compiled in batches
    (iree_batches.py), once a process: its tests (an xdist_group: one worker runs them
    all) then find their functions compiled."""
    texts = []
    for f, args in IREE_CORPORA[corpus]():
        with contextlib.suppress(Exception):  # what does not export is its test's to say
            texts.append(lowered(f, args).mlir)
    # a third of the fuzz corpus's likely gaps fail, most with errors that name no
    # function (a fixed point, a crash): those texts cost least compiled one at a time
    likely_batch = 1 if corpus == "fuzz" else iree_batches.LIKELY_BATCH
    iree_batches.compile_all(upstream(), texts, likely_batch)


@pytest.mark.slow  # the quick run has IREE run fuzz seeds 0 to 3
@pytest.mark.xdist_group("iree loops")
@pytest.mark.parametrize("name", list(LOOP_CORPUS))
def test_iree_runs_the_loop_corpus_as_the_native_code_does(name):
    compiled_ahead("loops")
    f, x = LOOP_CORPUS[name]()
    outcome = agrees_with_iree(f, (x,), 1e-9, ahead=True)
    assert outcome in OUTCOMES or outcome in upstream().IREE_GAPS


@pytest.mark.slow
@pytest.mark.xdist_group("iree loops")  # its programs are the corpus's, compiled ahead
def test_iree_runs_most_of_a_quick_loop_sample():
    """Loops of every kind under every transformation run under IREE and agree with the
    native code (the gaps are a minority)."""
    compiled_ahead("loops")
    outcomes = []
    for name in QUICK_LOOPS:
        f, x = LOOP_CORPUS[name]()
        outcomes.append(agrees_with_iree(f, (x,), 1e-9, ahead=True))
    assert outcomes.count("agree") >= 6, outcomes


@pytest.mark.xdist_group("iree fuzz")
@pytest.mark.parametrize("grad", [False, True], ids=["value", "grad"])
@pytest.mark.parametrize("seed", [*range(SLOW_FUZZ_SEEDS.start),
                                  *(pytest.param(s, marks=pytest.mark.slow)
                                    for s in SLOW_FUZZ_SEEDS)])
def test_iree_runs_fuzz_programs_as_the_native_code_does(seed, grad):
    if seed in SLOW_FUZZ_SEEDS:
        compiled_ahead("fuzz")
    f, args, rtol = fuzz_case(seed, grad)
    outcome = agrees_with_iree(f, args, rtol, ahead=seed in SLOW_FUZZ_SEEDS)
    assert outcome in OUTCOMES or outcome in upstream().IREE_GAPS


@pytest.mark.slow
@pytest.mark.xdist_group("iree primitives")
@pytest.mark.parametrize("case", pc.CASES, ids=[c.id for c in pc.CASES])
def test_iree_runs_the_primitive_table_as_the_native_code_does(case):
    compiled_ahead("primitives")
    f, args = primitive_case(case)
    rtol = 1e-10 if case.dtype == np.float64 else 1e-5
    outcome = agrees_with_iree(f, args, rtol, ahead=True)
    assert outcome in OUTCOMES or outcome in upstream().IREE_GAPS


# ------------------------------------------------------------- the text itself


def test_every_primitive_has_an_mlir_form_or_is_named_in_the_docs():
    page = (REPO / "docs" / "mlir.md").read_text()
    not_covered = page[page.index("## Not covered"):page.index("## IREE")]
    missing = [name for name, p in Primitive.registry.items()
               if p not in RULES and f"`{name}`" not in not_covered]
    assert not missing, missing



def test_text_needs_no_iree_and_verification_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "iree", None)
    monkeypatch.setitem(sys.modules, "iree.compiler", None)
    stages = rune.jit(lambda x: rnp.sin(x) * 2.0).lower(np.ones(3))
    assert "math.sin" in stages.as_text("mlir") and stages.as_text() == stages.mlir
    with pytest.raises(ImportError, match=r"rune-jit\[mlir\]"):
        stages.verify_mlir()


def test_the_users_lines_are_the_locations():
    def f(x):
        return rnp.exp(x) + 1.0  # the line the location names
    text = rune.jit(f).lower(np.ones(2)).mlir
    line = f.__code__.co_firstlineno + 1
    assert re.search(rf'#loc\d+ = loc\(".*test_mlir.py":{line}:0\)', text), text
    alias = re.search(rf'(#loc\d+) = loc\(".*test_mlir.py":{line}:0\)', text).group(1)
    assert re.search(rf"math\.exp .* loc\({alias}\)", text)


def test_a_primitive_without_mlir_form_is_named_with_the_users_line():
    def f(x):
        return rnp.linalg.cholesky(x) * 2.0
    with pytest.raises(NotImplementedError, match=r"cholesky has no MLIR form at .*"
                                                  rf"test_mlir.py:{f.__code__.co_firstlineno + 1}"):
        rune.jit(f).lower(np.eye(3)).mlir


def test_a_primitive_nested_in_a_loop_is_named_with_its_own_line():
    def f(xs):
        return rune.scan(lambda c, x: (c + rnp.linalg.cholesky(x)[0, 0], None), 0.0, xs)[0]
    line = f.__code__.co_firstlineno + 1
    with pytest.raises(NotImplementedError, match=rf"cholesky has no MLIR form at .*:{line}"):
        rune.jit(f).lower(np.stack([np.eye(2)] * 3)).mlir


def test_as_text_names_the_dialects_it_knows():
    stages = rune.jit(lambda x: x * 2.0).lower(np.ones(2))
    assert stages.as_text("ir") == stages.ir and "define" in stages.as_text("llvm")
    with pytest.raises(ValueError, match="'mlir', 'ir', 'llvm', 'asm'.*'stablehlo'"):
        stages.as_text("stablehlo")


def test_the_interpreter_backend_exports_the_same_program(monkeypatch):
    from rune_jit._src import config

    f = rune.grad(lambda xs: rune.scan(lambda c, x: (c * x + 1.0, None), 1.0, xs)[0])
    native = rune.jit(f).lower(np.ones(3)).mlir
    monkeypatch.setattr(config, "backend", "interpret")
    interpreted = rune.jit(f).lower(np.ones(3)).mlir
    assert "scf.for" in native and "scf.for" in interpreted


def test_dump_mlir_prints_the_program_as_it_compiles(monkeypatch, capsys):
    monkeypatch.setenv("RUNE_JIT_DUMP", "mlir")
    monkeypatch.setenv("RUNE_JIT_CACHE", "0")
    rune.jit(lambda x: rnp.tanh(x) * 3.0)(np.ones(5))
    err = capsys.readouterr().err
    assert "--- MLIR:" in err and "math.tanh" in err and "tensor<5xf64>" in err


def test_a_vmapped_iterate_is_a_loop_over_lanes_of_while_loops():
    f = rune.vmap(lambda a: rune.iterate(lambda x: x * 0.5, a, until=lambda x: x < 1.0,
                                         max_steps=50))
    text = rune.jit(f).lower(np.array([3.0, 40.0])).mlir
    assert re.search(r"scf\.for .*\n(.*\n)*.*scf\.while", text), text
    assert 'cf.assert' in text and "max_steps = 50" in text


@pytest.mark.parametrize("dtype", ["float32", "int32", "uint8", "bool"])
def test_constants_read_back_exactly(dtype):
    up = upstream()
    values = np.array([0, 1, 3, 7], dtype) if dtype != "float32" else np.array(
        [0.1, -np.inf, np.nan, 3e38], dtype)
    text = rune.jit(lambda x: x + values).lower(np.zeros(4, dtype)).mlir
    up.verify(text)
    if dtype != "bool":  # IREE's own results
        got = up.iree_function(text)(np.zeros(4, dtype))[0]
        np.testing.assert_array_equal(same_bits_type(got, values), values)


def test_a_complex_program_has_no_mlir_form_rather_than_the_backends_pairs():
    """Regression: the text of a complex program was the CPU backend's rewrite of it, a
    pair of float64 arguments for each complex128 one (a signature not the user's)."""
    stages = rune.jit(lambda z: z * z).lower(np.ones(3, np.complex128))
    with pytest.raises(NotImplementedError, match="complex"):
        stages.mlir
    with pytest.raises(NotImplementedError, match="complex"):
        rune.jit(lambda x: rnp.abs(x * 1j)).lower(np.ones(3)).as_text("mlir")
    assert np.allclose(rune.jit(lambda z: z * z)(np.full(3, 1j)), -1)


def test_a_product_of_a_value_with_itself_reads_each_operand_by_its_own_map():
    """Regression: a product of one value with itself (einsum("ij,kj->ik", x, x)) read
    both operands through the first one's indexing map, so IREE computed
    [[x0·x0, x0·x0], [x1·x1, x1·x1]] for x @ x.T (found by tools/mlir_coverage.py in the
    docs' programs)."""
    up = upstream()
    x = np.arange(6.0).reshape(2, 3)

    def f(x):
        return rnp.einsum("ij,kj->ik", x, x), rnp.einsum("ji,jk->ik", x, x)
    text = rune.jit(f).lower(x).mlir
    dots = re.findall(r"indexing_maps = \[(#map\d+), (#map\d+), #map\d+\], iterator_types = "
                      r"\[[^]]*\"reduction\"", text)
    assert len(dots) == 2 and all(m1 != m2 for m1, m2 in dots), text
    return up, f, x, text


@pytest.mark.slow
def test_iree_computes_a_product_of_a_value_with_itself():
    up, f, x, text = test_a_product_of_a_value_with_itself_reads_each_operand_by_its_own_map()
    for got, want in zip(up.iree_function(text)(x), f(x)):
        np.testing.assert_allclose(got, want, rtol=1e-14)


@pytest.mark.slow  # the batches of the slow IREE tests
def test_a_batch_compiles_a_failing_function_alone_and_the_others_together():
    """iree_batches: iree-compile's error names the function that fails (a scalar cosh,
    one of IREE's gaps), which then fails alone with its own error, and the others
    compile again together and run (three runs of iree-compile, not a split in halves)."""
    up = upstream()
    x = np.linspace(0.1, 1.0, 3)
    fs = [lambda x: rnp.tanh(x) * 2.0 + 0.125,  # a tanh of a tensor: IREE compiles it
          lambda x: rune.scan(lambda c, r: (rnp.cosh(c) * 0.1 + r, c), 0.0, x)[0],
          lambda x: rnp.tanh(x) - 0.375]
    texts = [lowered(f, (x,)).mlir for f in fs]
    runs = []

    class Counted:
        def __getattr__(self, name):
            return getattr(up, name)

        def iree_compile(self, text):
            runs.append(text.count("func.func @"))
            return up.iree_compile(text)
    assert all(iree_batches.LIKELY_GAP.search(t) for t in texts)  # one batch of them
    iree_batches.compile_all(Counted(), texts, likely_batch=3)
    assert runs == [3, 1, 2]
    with pytest.raises(Exception, match=r"math\.cosh") as alone:
        iree_batches.compiled(up, texts[1])
    assert "@f1" not in str(alone.value)  # its error compiled alone, not the batch's
    for i in (0, 2):
        got = iree_batches.compiled(up, texts[i])(x)[0]
        np.testing.assert_allclose(got, fs[i](x), rtol=1e-14)
