"""`quadrants._test_tools` at its Quadrants path: the helpers Quadrants' own test files import
(`qd_init_same_arch`, `textwrap2`, `warnings_helper`, `dataclass_test_tools`,
`load_kernel_string`), so those files run unchanged on qdlab. Not part of the language."""

from __future__ import annotations

import qdlab as qd

from . import textwrap2, warnings_helper


def qd_init_same_arch(**options: object) -> None:
    """`qd.init(**options)` again on the arch the program runs on now (`qd.cfg.arch`)."""
    qd.init(**{**options, "arch": qd.cfg.arch})


__all__ = ["qd_init_same_arch", "textwrap2", "warnings_helper"]
