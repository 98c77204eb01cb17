"""Golden LLVM IR (before optimisation) of the sample kernels, construct by construct.

Regenerate after an intended codegen change with
`QDLAB_UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/compiler/codegen` and review the diff.
Symbol names carry the construct's cache key, which changes with every compiler edit, so they are
compared as `qd_KEY`; the target triple and data layout are the host's and compared as `HOST`.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import numpy as np
import pytest

import qdlab as qd

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
import golden_kernels as K

CASES = {
    "saxpy": (K.saxpy, lambda: (2.0, np.ones(8, np.float32), np.ones(8, np.float32))),
    "row_sums": (K.row_sums, lambda: (np.ones((3, 4), np.int32), np.zeros(3, np.int32))),
    "reduce_then_scale": (
        K.reduce_then_scale,
        lambda: (np.ones(8, np.float32), np.zeros(8, np.float32)),
    ),
    "clamped_stencil": (
        K.clamped_stencil,
        lambda: (np.ones(8, np.float32), np.zeros(8, np.float32)),
    ),
}


def normalised_llvm(kernel) -> str:
    report = qd.explain(kernel)
    parts = [f"; construct {c.index} ({c.kind})\n{c.stage('llvm')}" for c in report.constructs]
    text = re.sub(r"qd_[0-9a-f]{24}(_f\d+)?", "qd_KEY", "\n".join(parts))
    return re.sub(
        r'target (triple|datalayout) = ".*"', r'target \1 = "HOST"', text
    )  # the host's, not the kernel's


@pytest.mark.parametrize("name", sorted(CASES))
def test_llvm_ir_matches_golden(name: str) -> None:
    qd.init(arch=qd.cpu, offline_cache=False)
    kernel, args = CASES[name]
    kernel(*args())
    text = normalised_llvm(kernel)
    golden = HERE / "golden" / f"{name}.ll"
    if os.environ.get("QDLAB_UPDATE_GOLDEN") == "1" or not golden.exists():
        golden.write_text(text)
    assert text == golden.read_text(), (
        f"LLVM IR of {name} changed; review and regenerate (see module docstring)"
    )
