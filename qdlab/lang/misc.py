"""`quadrants.lang.misc`: the arch lists Quadrants code asks for."""

from __future__ import annotations

from ..host import archs


def get_host_arch_list() -> list[archs.Arch]:
    """The host's CPU arch, as a list (`arch=get_host_arch_list()` in a test means "the CPU")."""
    return [archs.cpu]
