"""The upstream MLIR Python bindings (bundled by IREE's compiler wheel, the `mlir` extra):
parse, verify, canonicalize; and IREE's compiler and runtime, a second compiler of the
same text (tests/backend/test_mlir.py compares what it computes with the native code's).
"""

from __future__ import annotations

import re
from typing import Any, Callable, Sequence

import numpy as np

EXTRA = ("the MLIR Python bindings are not installed: they come with IREE's compiler "
         "(pip install 'rune-jit[mlir]', which installs iree-base-compiler and "
         "iree-base-runtime)")

# IREE's flags for rune_jit's programs: keep float64 (by default IREE demotes it to
# float32, silently), and let its VM compute in float64 what runs on the host (scalars
# between the loops' kernels).
IREE_FLAGS = ("--iree-input-demote-f64-to-f32=false", "--iree-vm-target-extension-f64")
# For the CPU: link with the system's linker against libm (IREE's embedded linker has no
# libm: math.sin in float64 fails to link, `undefined symbol: sin`), for this machine's CPU.
CPU_FLAGS = ("--iree-hal-target-device=local", "--iree-hal-local-target-device-backends=llvm-cpu",
             "--iree-llvmcpu-link-embedded=false", "--iree-llvmcpu-target-cpu=host")
# What iree-compile targets for each of the runtime's drivers (the part of a device name
# before "://": "cuda://0" is the cuda driver's first device). A GPU's architecture is
# IREE's default unless the extra flags name it (--iree-cuda-target=sm_90,
# --iree-rocm-target=gfx942, --iree-vulkan-target=rdna3: hip and a float64 vulkan need one).
TARGETS = {"local-task": CPU_FLAGS, "local-sync": CPU_FLAGS,
           "cuda": ("--iree-hal-target-device=cuda",),
           "hip": ("--iree-hal-target-device=hip",),
           "vulkan": ("--iree-hal-target-device=vulkan",)}


def iree_flags(device: str = "local-task", extra: Sequence[str] = ()) -> list[str]:
    """iree-compile's flags for code that runs on `device` (a driver of IREE's runtime,
    maybe with a device after "://"), `extra` last (they win)."""
    driver = device.split("://", 1)[0]
    if driver not in TARGETS:
        raise ValueError(f"rune_jit: IREE device {device!r}: the drivers rune_jit compiles "
                         f"for are {', '.join(TARGETS)} (a device of one: 'cuda://1')")
    return [*IREE_FLAGS, *TARGETS[driver], *extra]

def bindings() -> Any:
    """`iree.compiler`'s `ir` and `passmanager` modules (the upstream bindings)."""
    try:
        from iree.compiler import ir, passmanager
    except ImportError as e:
        raise ImportError(EXTRA) from e
    return ir, passmanager


def verify(text: str, passes: str = "canonicalize,cse") -> str:
    """Parse `text` and verify it with upstream MLIR, run `passes` on it (and verify the
    result); -> the module after the passes. Raises ValueError with MLIR's diagnostics
    when the text does not parse or verify."""
    ir, passmanager = bindings()
    with ir.Context() as ctx:
        ctx.allow_unregistered_dialects = False
        try:
            module = ir.Module.parse(text)
            module.operation.verify()
            passmanager.PassManager.parse(f"builtin.module({passes})").run(module.operation)
            module.operation.verify()
        except ir.MLIRError as e:
            raise ValueError(f"upstream MLIR rejects the module: {e}") from None
        return str(module)


_INSERT = re.compile(r"^(\s*)(%\S+) = tensor\.insert (%\S+) into (%\S+)\[([^\]]*)\] : "
                     r"tensor<((?:\d+x)+)(\w+)>(.*)$", re.M)


def for_iree(text: str) -> str:
    """`text` with each `tensor.insert` of an element written as a `tensor.insert_slice`
    of a one-element tensor: the same meaning, which IREE 3.13 compiles correctly where
    it miscompiles element inserts into a tensor a loop carries (docs/mlir.md)."""
    def rewrite(m: re.Match) -> str:
        pad, name, value, dest, at, dims, elem, rest = m.groups()
        rank = dims.count("x")
        one = f"tensor<{'1x' * rank}{elem}>"
        ones = ", ".join(["1"] * rank)
        return (f"{pad}{name}_one = tensor.from_elements {value} : {one}\n"
                f"{pad}{name} = tensor.insert_slice {name}_one into {dest}[{at}] [{ones}] "
                f"[{ones}] : {one} into tensor<{dims}{elem}>{rest}")
    return _INSERT.sub(rewrite, text)


def iree_function(text: str, name: str = "main", device: str = "local-task") -> Callable:
    """`text` compiled by iree-compile for `device` and loaded into IREE's runtime: a
    function of NumPy arrays that returns a list of them."""
    return iree_load(iree_compile(text, device), name, device)


def iree_compile(text: str, device: str = "local-task", extra: Sequence[str] = ()) -> bytes:
    """`text` (a module of one function or many) compiled by iree-compile for `device`
    (`iree_flags`): IREE's VM module, to load with `iree_load`."""
    try:
        import iree.compiler as compiler
    except ImportError as e:
        raise ImportError(EXTRA) from e
    return compiler.compile_str(for_iree(text), extra_args=iree_flags(device, extra))


def iree_load(vmfb: bytes, name: str = "main", device: str = "local-task") -> Callable:
    """The function `name` of a compiled module, in a runtime context of its own (one
    function's failure leaves the others' untouched)."""
    runtime = iree_runtime()
    context = runtime.SystemContext(config=iree_config(device))
    context.add_vm_module(runtime.VmModule.copy_buffer(context.instance, vmfb))
    fn = context.modules.module[name]

    def call(*args: Sequence[Any]) -> list[np.ndarray]:
        outs = fn(*[np.array(a, order="C") for a in args])  # 0-d stays 0-d
        outs = [] if outs is None else outs if isinstance(outs, (tuple, list)) else [outs]
        return [np.asarray(o.to_host()) for o in outs]
    return call


def iree_runtime() -> Any:
    """`iree.runtime` (an ImportError naming the extra without it)."""
    try:
        import iree.runtime as runtime
    except ImportError as e:
        raise ImportError(EXTRA) from e
    return runtime


_CONFIGS: dict[str, Any] = {}


def iree_config(device: str) -> Any:
    """IREE's runtime configuration of `device`, its device opened once a process; a
    device IREE cannot open raises IREE's error with the device named."""
    if device not in _CONFIGS:
        runtime = iree_runtime()
        try:
            _CONFIGS[device] = runtime.Config(device)
        except (RuntimeError, ValueError) as e:
            raise RuntimeError(f"rune_jit: IREE cannot open the device {device!r} "
                               f"(RUNE_JIT_IREE_DEVICE; the drivers of this IREE: "
                               f"{', '.join(runtime.query_available_drivers())}): {e}") from e
    return _CONFIGS[device]


# What IREE 3.13 cannot compile (or, for the last, run) of rune_jit's valid programs, by
# its error (docs/mlir.md): a disagreement is never among them.
IREE_GAPS = {
    "math functions IREE does not lower (in float64, where they stay scalar: erf, erfc, "
    "asin, acos, asinh, acosh, atanh, sinh, cosh, tan, cbrt, copysign, trunc, ctpop)":
        r"failed to legalize operation 'math\.",
    "scalar conversions on the host (float64 to float32, int32 to float64)":
        r"failed to legalize operation 'arith\.(truncf|sitofp|extf|uitofp|fptosi)'",
    "a bool tensor made of scalars in a way IREE rejects (a tensor.from_elements of an i1; "
    "rune_jit writes results and reshapes of bool scalars with linalg.generic instead)":
        r"'tensor\.from_elements' op failed to verify that operand types match result "
        r"element type",
    "a fixed point IREE's pipeline does not reach": r"maximum iteration count exceeded",
    "IREE's stream partitioning": r"circular dependency: input operation uses partition output",
    "a libm function IREE's linker does not find (tanh, despite system linking)":
        r"undefined symbol: \w+",
    "iree-compile crashing (a segmentation fault; LLVM out of memory)":
        r"Error code: -(11|6)\b",
    "tapes of dynamic length (a while_loop without max_steps) in IREE's loops":
        r"'tensor\.dim' op unexpected|transient buffer has not been committed",
}


def iree_gap(error: BaseException) -> str | None:
    """Which of IREE_GAPS an error of iree-compile (or IREE's runtime) is, or None."""
    for name, pattern in IREE_GAPS.items():
        if re.search(pattern, str(error)):
            return name
    return None
