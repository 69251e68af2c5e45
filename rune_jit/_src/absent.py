"""JAX's names that rune_jit does not provide, and why: a module's `__getattr__` turns a
lookup of one into an AttributeError that says so and names rune_jit's spelling where
there is one (docs/porting-from-jax.md keeps the list for readers)."""

from __future__ import annotations

_DEVICES = "it places or maps work over devices, and rune_jit runs on one CPU process"
_SHARDING = "rune_jit has one device, so there is nothing to shard"

# module -> {name: (why it is absent, rune_jit's spelling or None)}
ABSENT: dict[str, dict[str, tuple[str, str | None]]] = {
    "rune_jit": {
        "pmap": (_DEVICES, "rune_jit.vmap"),
        "shard_map": (_SHARDING, "rune_jit.vmap"),
        "sharding": (_SHARDING, None),
        "P": (_SHARDING, None),
        "distributed": (_DEVICES, None),
        "make_mesh": (_SHARDING, None),
        "new_ref": ("rune_jit has no mutable array references", None),
        "profiler": ("rune_jit has no profiler of its own; RUNE_JIT_LOG=compiles logs "
                     "compile times", None),
        "xla_computation": ("rune_jit does not compile with XLA", "rune_jit.make_ir"),
    },
    "rune_jit.lax": {
        name: (_DEVICES, None) for name in
        ("psum", "pmean", "pmax", "pmin", "all_gather", "all_to_all", "ppermute",
         "axis_index", "pshuffle", "psum_scatter")
    } | {"with_sharding_constraint": (_SHARDING, None)},
    "rune_jit.dtypes": {
        "bfloat16": ("rune_jit's floats are float16, float32 and float64", None),
    },
    "rune_jit.numpy": {
        **{name: ("rune_jit's complex dtypes are complex64 and complex128", None)
           for name in ("complex_", "csingle", "cdouble")},
        **{name: ("rune_jit's floats are float16, float32 and float64", None)
           for name in ("bfloat16", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz",
                        "float8_e5m2fnuz", "float8_e4m3b11fnuz", "float4_e2m1fn")},
        **{name: ("rune_jit's integers are 8 to 64 bits", None) for name in ("int4", "uint4")},
    },
}


def attribute_error(module: str, name: str) -> AttributeError:
    """The error for `module.name` missing: JAX's name named when it is one of JAX's."""
    jax_module = "jax" + module[len("rune_jit"):]
    known = ABSENT.get(module, {}).get(name)
    if known is None:
        return AttributeError(f"module {module!r} has no attribute {name!r}")
    why, spelling = known
    instead = f"; use {spelling}" if spelling else ""
    return AttributeError(f"{module}.{name}: JAX's {jax_module}.{name} is not provided by "
                          f"rune_jit ({why}){instead}")
