# llvmlite ships no types, and what pyright infers from its source is wrong (its IRBuilder methods,
# made by decorators, come out as returning None): every name here is untyped.
from typing import Any

def __getattr__(name: str) -> Any: ...
