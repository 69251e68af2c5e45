"""How a region becomes LLVM IR: the passes before lowering, the region walk with its
fusion and buffers, loops' parts, IRBuilder helpers, arithmetic and the math library."""
