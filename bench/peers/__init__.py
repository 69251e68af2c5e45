"""Peers of rune_jit: the same workloads written for NumPy, JAX, Numba and plain C."""
