"""The CPU compiled code is generated for: RUNE_JIT_CPU and RUNE_JIT_CPU_FEATURES checked
against LLVM, the features the target's code may use, and whether this machine has them.

LLVM tells neither which features a CPU name implies nor (through llvmlite) whether a
name is valid: it prints "'x' is not a recognized processor for this target" to stderr
and compiles for a generic CPU. So valid names are read from the list LLVM prints for
the CPU name "help" (as `llc -mcpu=help` does), captured from file descriptors 1 and 2;
and a target's features are found by compiling probes: one tiny function per feature,
in generic LLVM IR whose code uses that feature's instructions exactly when the target
has it (a <8 x double> add uses zmm registers only with AVX-512F). The features probed
are those generic IR can reach; rune_jit emits no x86 intrinsics (but SSE2's `pause`
hint, in every x86-64), so code generated for a target uses no feature outside that
list. For the x86-64 psABI levels (x86-64-v2, -v3, -v4) the probes find just the
probed features each level lists (tests/backend/test_target_cpu.py).
"""

from __future__ import annotations

import os
import re
import sys
import tempfile
from functools import lru_cache
from typing import Callable, NamedTuple

import llvmlite.binding as llvm

from .call.forks import fork_waits
SETTING, FEATURES_SETTING = "RUNE_JIT_CPU", "RUNE_JIT_CPU_FEATURES"
WHERE_NAMES = ("`llc -mcpu=help` and `llc -mattr=help` list them (or LLVM's X86.td, "
               "https://github.com/llvm/llvm-project/blob/main/llvm/lib/Target/X86/X86.td)")


# LLVM's x86 CPUs without 64-bit mode: code generation for one of them in an x86-64
# process aborts the process ("64-bit code requested on a subtarget that doesn't support
# it"), so they are refused first. Found by compiling for each name LLVM 22 lists, each
# in a process of its own; newer LLVMs add 64-bit CPUs only.
NOT_64_BIT = frozenset(
    "athlon athlon-4 athlon-mp athlon-tbird athlon-xp c3 c3-2 geode i386 i486 i586 i686 k6 "
    "k6-2 k6-3 lakemont pentium pentium-m pentium-mmx pentium2 pentium3 pentium3m pentium4 "
    "pentium4m pentium_4 pentium_4_sse3 pentium_ii pentium_iii pentium_iii_no_xmm_regs "
    "pentium_m pentium_mmx pentium_pro pentiumpro prescott winchip-c6 winchip2 yonah".split())


class Target(NamedTuple):
    """An LLVM CPU name and feature string (`host`: this machine's, both detected)."""

    cpu: str
    features: str


def _probe(ret: str, params: str, body: str, declare: str = "") -> str:
    """The LLVM IR of function @probe: `body` computes %r, which it returns."""
    return f"{declare}\ndefine {ret} @probe({params}) {{\n  {body}\n  ret {ret} %r\n}}\n"


# feature -> (a function whose code shows the feature, the instruction that shows it)
PROBES: dict[str, tuple[str, str]] = {
    "sse4.1": (_probe("double", "double %a", "%r = call double @llvm.floor.f64(double %a)",
                      "declare double @llvm.floor.f64(double)"), r"\bv?roundsd\b"),
    "sse4.2": (_probe("<2 x i1>", "<2 x i64> %a, <2 x i64> %b", "%r = icmp sgt <2 x i64> %a, %b"),
               r"\bv?pcmpgtq\b"),
    "ssse3": (_probe("<16 x i8>", "<16 x i8> %a",
                     "%r = call <16 x i8> @llvm.abs.v16i8(<16 x i8> %a, i1 false)",
                     "declare <16 x i8> @llvm.abs.v16i8(<16 x i8>, i1)"), r"\bv?pabsb\b"),
    "popcnt": (_probe("i64", "i64 %a", "%r = call i64 @llvm.ctpop.i64(i64 %a)",
                      "declare i64 @llvm.ctpop.i64(i64)"), r"\bpopcnt"),
    "lzcnt": (_probe("i64", "i64 %a", "%r = call i64 @llvm.ctlz.i64(i64 %a, i1 false)",
                     "declare i64 @llvm.ctlz.i64(i64, i1)"), r"\blzcnt"),
    "bmi": (_probe("i64", "i64 %a", "%r = call i64 @llvm.cttz.i64(i64 %a, i1 false)",
                   "declare i64 @llvm.cttz.i64(i64, i1)"), r"\btzcnt"),
    "bmi2": (_probe("i64", "i64 %a, i64 %b", "%r = shl i64 %a, %b"), r"\bshlx"),
    "movbe": (_probe("i64", "ptr %p", "%v = load i64, ptr %p\n  %r = call i64 "
                     "@llvm.bswap.i64(i64 %v)", "declare i64 @llvm.bswap.i64(i64)"), r"\bmovbe"),
    "avx": (_probe("<4 x double>", "<4 x double> %a, <4 x double> %b",
                   "%r = fadd <4 x double> %a, %b"), r"%ymm"),
    "avx2": (_probe("<8 x i32>", "<8 x i32> %a, <8 x i32> %b", "%r = add <8 x i32> %a, %b"),
             r"\bvpaddd\s+%ymm"),
    "fma": (_probe("double", "double %a, double %b, double %c",
                   "%r = call double @llvm.fma.f64(double %a, double %b, double %c)",
                   "declare double @llvm.fma.f64(double, double, double)"), r"\bvfmadd"),
    # AVX512-FP16 converts a half with its own instruction (and implies F16C)
    "f16c": (_probe("float", "half %a", "%r = fpext half %a to float"),
             r"\bvcvt(ph2ps|sh2ss)\b"),
    "avx512f": (_probe("<8 x double>", "<8 x double> %a, <8 x double> %b",
                       "%r = fadd <8 x double> %a, %b"), r"%zmm"),
    "avx512bw": (_probe("<64 x i8>", "<64 x i8> %a, <64 x i8> %b", "%r = add <64 x i8> %a, %b"),
                 r"\bvpaddb\s+%zmm"),
    "avx512dq": (_probe("<8 x i64>", "<8 x double> %a", "%r = fptosi <8 x double> %a to <8 x i64>"),
                 r"\bvcvttpd2qq"),
    "avx512vl": (_probe("<2 x i64>", "<2 x i64> %a",
                        "%r = call <2 x i64> @llvm.abs.v2i64(<2 x i64> %a, i1 false)",
                        "declare <2 x i64> @llvm.abs.v2i64(<2 x i64>, i1)"), r"\bvpabsq\s+%xmm"),
    "avx512cd": (_probe("<8 x i64>", "<8 x i64> %a",
                        "%r = call <8 x i64> @llvm.ctlz.v8i64(<8 x i64> %a, i1 false)",
                        "declare <8 x i64> @llvm.ctlz.v8i64(<8 x i64>, i1)"), r"\bvplzcntq"),
    "avx512vpopcntdq": (_probe("<8 x i64>", "<8 x i64> %a",
                               "%r = call <8 x i64> @llvm.ctpop.v8i64(<8 x i64> %a)",
                               "declare <8 x i64> @llvm.ctpop.v8i64(<8 x i64>)"), r"\bvpopcntq"),
    "avx512fp16": (_probe("half", "half %a, half %b", "%r = fadd half %a, %b"), r"\bvaddsh"),
    "avx512bf16": (_probe("<8 x bfloat>", "<8 x float> %a",
                          "%r = fptrunc <8 x float> %a to <8 x bfloat>"), r"\bvcvtneps2bf16"),
}


@lru_cache(maxsize=None)
def host_features() -> frozenset[str]:
    """The features this machine has, as LLVM detects them (those the OS enables too)."""
    llvm.initialize_native_target()
    return frozenset(f for f, on in llvm.get_host_cpu_features().items() if on)


def resolve(cpu: str, features: str) -> Target:
    """The target the settings name: `host` is this machine's name and features (its
    features, then the setting's, which LLVM applies in order); any other name and the
    features are checked against LLVM's lists (ValueError naming the bad one)."""
    llvm.initialize_native_target()
    if cpu == "host":
        # every feature LLVM detects, on or off: off ones the name implies stay off (a
        # virtual machine's OS may not enable AVX-512 on a CPU that has it); the off ones
        # last, since LLVM applies them in order and one on may imply one off
        on = host_features()
        off = set(llvm.get_host_cpu_features()) - on
        detected = ",".join([f"+{f}" for f in sorted(on)] + [f"-{f}" for f in sorted(off)])
        return Target(llvm.get_host_cpu_name(),
                      ",".join(filter(None, [detected, check_features(features)])))
    if cpu not in known_names()[0]:
        raise ValueError(f"{SETTING}={cpu!r} is not a CPU LLVM knows for "
                         f"{llvm.get_process_triple()}: use `host` or an LLVM CPU name such "
                         f"as x86-64-v3, haswell or skylake-avx512; {WHERE_NAMES}")
    if cpu in NOT_64_BIT and llvm.get_process_triple().startswith("x86_64"):
        raise ValueError(f"{SETTING}={cpu!r} is a 32-bit CPU; rune_jit makes x86-64 code: "
                         f"use `host` or a 64-bit CPU such as x86-64, x86-64-v3 or haswell")
    return Target(cpu, check_features(features))


def check_features(features: str) -> str:
    """`features` without spaces; ValueError unless it is a comma-separated list of
    +name or -name, each name a feature LLVM knows."""
    valid = known_names()[1]
    items = [s.strip() for s in features.split(",") if s.strip()]
    for item in items:
        if item[0] not in "+-" or item[1:] not in valid:
            raise ValueError(f"{FEATURES_SETTING}={features!r}: {item!r} is not +name or "
                             f"-name of a CPU feature LLVM knows (e.g. +avx2,-avx512f); "
                             f"{WHERE_NAMES}")
    return ",".join(items)


@lru_cache(maxsize=None)
def known_names() -> tuple[frozenset[str], frozenset[str]]:
    """(the CPU names, the feature names) LLVM knows for this machine's architecture."""
    llvm.initialize_native_target()
    target = llvm.Target.from_triple(llvm.get_process_triple())
    text = _output_of(lambda: target.create_target_machine(cpu="help"))
    cpus, _, feats = text.partition("Available features for this target:")
    entry = re.compile(r"^\s+(\S+)\s+- ", re.M)
    return frozenset(entry.findall(cpus)), frozenset(entry.findall(feats))


def _output_of(call: Callable[[], object]) -> str:
    """What `call` writes to file descriptors 1 and 2 (LLVM's outs() and errs(), not
    Python's sys.stdout: LLVM 22 prints its CPU list to errs(); outs() is read too, in
    case another version prints it there)."""
    sys.stdout.flush()
    sys.stderr.flush()
    # one capture at a time (two would leave the descriptors pointing at a file), and
    # never a fork during one (forks.py)
    with fork_waits, tempfile.TemporaryFile() as f:
        saved = [os.dup(1), os.dup(2)]
        try:
            os.dup2(f.fileno(), 1)
            os.dup2(f.fileno(), 2)
            call()
        finally:
            for fd, old in zip((1, 2), saved):
                os.dup2(old, fd)
                os.close(old)
        f.seek(0)
        return f.read().decode(errors="replace")


def probed_features(emit_assembly: Callable[[llvm.ModuleRef], str], data_layout: str
                    ) -> frozenset[str]:
    """The features of PROBES the target that `emit_assembly` compiles for uses (the
    probes compiled as one module: 20 modules cost 0.2 s, one 15 ms)."""
    names = list(PROBES)
    source = "\n".join(PROBES[f][0].replace("@probe(", f"@probe{i}(")
                       for i, f in enumerate(names))
    mod = llvm.parse_assembly(source)
    mod.triple, mod.data_layout = llvm.get_process_triple(), data_layout
    pieces = re.split(r"^probe(\d+):", emit_assembly(mod), flags=re.M)
    bodies = {names[int(i)]: body for i, body in zip(pieces[1::2], pieces[2::2])}
    return frozenset(f for f, body in bodies.items() if re.search(PROBES[f][1], body))


def lacking(required: frozenset[str] | list[str]) -> list[str]:
    """The features of `required` this machine lacks, sorted."""
    return sorted(set(required) - host_features())


def check_runs_here(target: Target, required: frozenset[str]) -> None:
    """ValueError, before any code for `target` runs, if this machine lacks features its
    code may use (an illegal instruction otherwise)."""
    missing = lacking(required)
    if missing:
        raise ValueError(
            f"{SETTING}={target.cpu!r} (features {target.features or 'none'!r}) makes code "
            f"that needs {', '.join(missing)}, which this CPU ({llvm.get_host_cpu_name()}) "
            f"lacks: such code can only be read (`.lower(...).asm`), not run. Set {SETTING} "
            f"to `host` or to a CPU this one has the features of (e.g. x86-64-v3)")
