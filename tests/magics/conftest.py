"""A real IPython shell with the extension loaded, a private construct cache per test, and cell
builders."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from IPython.core.interactiveshell import InteractiveShell

import qdlab as qd


@pytest.fixture
def shell(tmp_path: object) -> Iterator[InteractiveShell]:
    ip = InteractiveShell.instance()
    ip.reset(new_session=False)
    if "qdlab" not in ip.extension_manager.loaded:
        ip.run_line_magic("load_ext", "qdlab")
    qd.init(offline_cache_file_path=str(tmp_path))
    yield ip
    qd.reset()


from magic_cells import edited, run, six_loops  # noqa: F401  (re-exported for older imports)
