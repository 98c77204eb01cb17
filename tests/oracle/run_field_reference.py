"""Run every program of `field_programs.py` on the reference (quadrants, CPU) and save the results:
`python run_field_reference.py OUT.npz`. Runs in its own process: quadrants and qdlab each bundle
LLVM and never share one."""

from __future__ import annotations

import json
import sys
import traceback
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import field_programs
import quadrants

field_programs.qd = quadrants
flat: dict = {}
errors: dict = {}
for name, fn in field_programs.PROGRAMS.items():
    quadrants.init(arch=quadrants.cpu, offline_cache=False)
    try:
        for key, value in fn().items():
            flat[f"{name}/{key}"] = np.asarray(value)
    except Exception:  # noqa: BLE001 - reported by the program's own test
        errors[name] = traceback.format_exc()
flat["__errors__"] = np.array(json.dumps(errors))
np.savez(sys.argv[1], **flat)
