"""The compiler version in every key digests the compiler's sources; a new process reads the
digest from the record its stamp (names, sizes, modification times) names, and digests again when
a source changed or the record is not one."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from qdlab import __version__
from qdlab.core import keys


def digest() -> str:
    h = hashlib.sha256()
    for path, _ in keys._sources():
        h.update(Path(path).read_bytes())
    return f"qdlab-{__version__}+{h.hexdigest()[:16]}"


def records() -> list[Path]:
    return sorted((Path(keys.__file__).parent / "__pycache__").glob("qdlab-version-*.txt"))


@pytest.fixture(autouse=True)
def _fresh():
    keys.compiler_version.cache_clear()
    yield
    keys.compiler_version.cache_clear()


def test_the_version_is_the_sources_digest_made_or_read() -> None:
    for r in records():
        r.unlink()
    made = keys.compiler_version()
    assert made == digest()
    (record,) = records()
    assert record.read_text() == made
    keys.compiler_version.cache_clear()
    assert keys.compiler_version() == made  # read back


def test_a_record_that_is_not_a_version_is_digested_again() -> None:
    keys.compiler_version()
    for r in records():
        r.write_text("not a version")
    keys.compiler_version.cache_clear()
    assert keys.compiler_version() == digest()
    assert all(r.read_text() == digest() for r in records())


def test_a_source_touched_since_has_another_stamp(tmp_path) -> None:
    keys.compiler_version()
    before = set(records())
    source = Path(keys.__file__)
    st = source.stat()
    try:
        os.utime(source, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))
        keys.compiler_version.cache_clear()
        assert keys.compiler_version() == digest()  # the same bytes: the same version
        assert set(records()) - before  # found under a new stamp, digested again
    finally:
        os.utime(source, ns=(st.st_atime_ns, st.st_mtime_ns))
        for r in set(records()) - before:
            r.unlink()
