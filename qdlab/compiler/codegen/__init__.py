"""Code generation: LLVM IR from the IR (`llvm.py`), native objects and their loading (`jit.py`)."""
