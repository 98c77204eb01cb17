"""Run the oracle corpus on the reference implementation (``quadrants``) and save the outputs.

Why this script exists: quadrants and qdlab (via llvmlite) each bundle their own LLVM, so the
reference must run in its own process.  ``test_oracle.py`` runs this script in a subprocess and
compares qdlab against the ``.npz`` it writes.

Usage: ``python tests/oracle/run_reference.py OUT.npz [--only NAME ...]``

The ``.npz`` holds ``<case>/arg<k>`` (output arrays after the call) and ``<case>/ret`` (return
value).  A case that raises is recorded under ``__errors__`` (a JSON mapping name -> message) and
makes the script exit with status 1 after all other cases have run.
"""

from __future__ import annotations

import argparse
import json
import sys
import traceback
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, help="output .npz path")
    parser.add_argument("--only", nargs="*", default=None, help="run only these case names")
    args = parser.parse_args(argv)

    import quadrants as qd

    qd.init(arch=qd.cpu, offline_cache=False)
    kernels = harness.load_kernels(qd, "oracle_kernels_quadrants")

    flat: dict[str, np.ndarray] = {}
    errors: dict[str, str] = {}
    for case in kernels.CASES:
        if args.only and case.name not in args.only:
            continue
        try:
            flat.update(harness.flatten(case.name, harness.run_case(qd, case)))
        except Exception:  # noqa: BLE001 - record and keep going
            errors[case.name] = traceback.format_exc()
            print(f"[run_reference] {case.name} FAILED:\n{errors[case.name]}", file=sys.stderr)
    flat["__errors__"] = np.array(json.dumps(errors))
    flat["__cases__"] = np.array(json.dumps([c.name for c in kernels.CASES]))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    np.savez(args.out, **flat)
    n_ok = len(kernels.CASES) - len(errors)
    print(f"[run_reference] {n_ok}/{len(kernels.CASES)} cases ok -> {args.out}")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
