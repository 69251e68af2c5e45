"""What the cache tests count: programs traced by jit, compiled, and loaded from disk."""

counts = {"traced": 0, "compiled": 0, "loaded": 0}
