"""`python -m rune_jit` prints the tour of loops (`--markdown`: as docs/loops.md);
`python -m rune_jit cache info` and `python -m rune_jit cache clear` show and empty the
disk cache."""

import sys

from ._src.tour import main


def cache_command(args: list[str]) -> int:
    from ._src.call import disk_cache

    if args not in (["info"], ["clear"]):
        print("usage: python -m rune_jit cache info|clear", file=sys.stderr)
        return 2
    if args == ["clear"]:
        freed = disk_cache.clear()
        print(f"removed {freed / 2**20:.1f} MiB from {disk_cache.directory()}")
        return 0
    use = disk_cache.usage()
    state = "enabled" if disk_cache.enabled() else "disabled (RUNE_JIT_CACHE=0)"
    print(f"cache directory: {use.root}\nstate: {state}\nentries: {use.entries}\n"
          f"size: {use.bytes / 2**20:.1f} MiB of at most "
          f"{disk_cache.max_bytes() / 2**20:.0f} MiB (RUNE_JIT_CACHE_MAX_BYTES)")
    return 0


if sys.argv[1:2] == ["cache"]:
    sys.exit(cache_command(sys.argv[2:]))
main()
