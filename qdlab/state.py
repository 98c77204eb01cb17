"""Process-wide state behind `qd.init`: the active config, the construct cache and compile
history."""

from __future__ import annotations

import os
from collections.abc import Callable

from .compiler import remote, runtime
from .compiler.cache import BinaryCache
from .compiler.config import Config, make_config

_config: Config = make_config()
_cache: BinaryCache | None = None
_memory_cache: BinaryCache | None = None
generation = 0
"""Bumped by every `qd.init`; kernels recompile under the new settings."""
history: dict[str, object] = {}
"""Latest compile of each kernel, by name: what the next compile of the same name is compared
against."""
tape: object | None = None
"""The `qd.ad.Tape` being recorded, if any."""
compile_hooks: list[Callable] = []
"""Called as hook(kernel, compiled) after each compile (the notebook views subscribe here)."""
report_hooks: list[Callable] = []
"""Called as hook(kernel, compiled) when a compile's report gained something (`qd.profile`'s run
times); the visualizer subscribes here too."""


def config() -> Config:
    return _config


def init(**kwargs: object) -> Config:
    global _config, _cache, generation
    _config = make_config(**kwargs)
    if _config.remote_cache:
        remote.prefetch()
    _cache = None
    generation += 1
    runtime.set_threads(_config.cpu_max_num_threads)
    return _config


def cache() -> BinaryCache:
    global _cache
    if _cache is None:
        directory = _config.offline_cache_file_path or os.environ.get("QDLAB_CACHE_DIR") or None
        team = (
            remote.tier(_config.remote_cache, _config.remote_cache_prefix)
            if _config.remote_cache
            else None
        )
        _cache = BinaryCache(
            directory,
            disk=_config.offline_cache,
            max_size_mb=_config.offline_cache_max_size_mb,
            remote=team,
        )
    return _cache


def cache_for(cfg: Config) -> BinaryCache:
    """The cache for compiles under `cfg`: the shared one, or a memory-only one when `cfg` turns off
    the disk tier that the active config has on (a kernel's own `offline_cache=False`, as
    `%%qdkernel --no-cache` sets)."""
    global _memory_cache
    if cfg.offline_cache or not _config.offline_cache:
        return cache()
    if _memory_cache is None:
        _memory_cache = BinaryCache(None, disk=False, max_size_mb=cfg.offline_cache_max_size_mb)
    return _memory_cache
