"""The tour: `python -m rune_jit` prints what the library does, with outputs."""

from .tour import main

main()
