"""The compiler: frontend, IR, passes, split, gate, codegen, runtime and cache; `pipeline.py` runs them."""
