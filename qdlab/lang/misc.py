"""`quadrants.lang.misc`: the arch lists and extension queries Quadrants code asks for."""

from __future__ import annotations

from ..core import environ
from ..core.language import BUILTINS, loop_unique
from ..host import archs, extensions

__all__ = ["get_host_arch_list", "is_extension_supported", "loop_unique", "no_activate"]

no_activate = BUILTINS["no_activate"]


def get_host_arch_list() -> list[archs.Arch]:
    """The host's CPU arch, as a list (`arch=get_host_arch_list()` in a test means "the CPU")."""
    return [archs.cpu]


def is_extension_supported(arch: archs.Arch, ext: extensions.Extension) -> bool:
    """Whether qdlab's backend for `arch` has the extension `ext` (`qd.extension.adstack`...)."""
    return extensions.is_extension_supported(arch, ext)


def _check_ir_load_envs_against_caching(cfg: object, src_ll_cache: bool) -> None:
    """Quadrants' check that `QD_LOAD_IR` / `QUADRANTS_LOAD_PTX` come with caching off, for a
    config with an `arch` (`qd.cuda`...) and `offline_cache` (`core/environ.py`)."""
    arch, offline_cache = vars(cfg)["arch"], bool(vars(cfg)["offline_cache"])
    name = arch.name if isinstance(arch, archs.Arch) else str(arch)
    environ.check_ir_load_against_caching(name, offline_cache, src_ll_cache)
