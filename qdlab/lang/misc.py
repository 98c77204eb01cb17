"""`quadrants.lang.misc`: the arch lists and extension queries Quadrants code asks for."""

from __future__ import annotations

from ..host import archs
from ..host.extensions import is_extension_supported

__all__ = ["get_host_arch_list", "is_extension_supported"]


def get_host_arch_list() -> list[archs.Arch]:
    """The host's CPU arch, as a list (`arch=get_host_arch_list()` in a test means "the CPU")."""
    return [archs.cpu]
