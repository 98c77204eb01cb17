"""Code generation: LLVM IR from the IR (`llvm.py`), native objects (`jit.py`), their linking into
the process (`elf.py`, else MCJIT in `jit.py`) and the host's part of their keys (`host.py`)."""
