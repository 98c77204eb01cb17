"""What a program holds and passes to kernels: kernel objects and their launch (`host/kernel.py`),
argument kinds, ndarrays, fields and SNodes, structs, tensors, data-oriented classes, the torch
bridge, `qd.init` and the process state behind it (`host/api.py`, `host/state.py`). Imports the
compiler and the core, nothing above."""
