"""Lowering rules, one module per primitive family: each fills rows of the tables of
codegen/lower.py as it is imported (the CPU backend's __init__ imports them all)."""
