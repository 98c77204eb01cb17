"""Process-wide state behind `qd.init`: the active config, the construct cache and compile
history."""

from __future__ import annotations

import atexit
import logging
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from ..compiler import runtime
from ..compiler.cache import BinaryCache, default_cache_dir, remote
from ..compiler.cache.kernel_records import KernelRecords
from ..core import matrix
from ..core.config import Config, make_config
from ..core.types import DTYPES

if TYPE_CHECKING:
    from ..compiler.pipeline import Compiled
    from .tape import FwdMode, Tape


class StderrHandler(logging.Handler):
    """Shows the `qdlab` logger's records on the standard error of the moment (as Quadrants shows
    its warnings), whatever the application configured; `qd.init(log_level=...)` sets what
    passes."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            sys.stderr.write(f"[qdlab {record.levelname}] {record.getMessage()}\n")
        except Exception:  # noqa: BLE001 - a closed stream must not break a compile
            self.handleError(record)


log = logging.getLogger("qdlab")
if not any(isinstance(h, StderrHandler) for h in log.handlers):
    log.addHandler(StderrHandler())
    log.setLevel(logging.INFO)  # Quadrants' default level
_config: Config = make_config()
_cache: BinaryCache | None = None
_memory_cache: BinaryCache | None = None
generation = 0
"""Bumped by every `qd.init`; kernels recompile under the new settings."""
epoch = 0
"""Bumped by every `qd.init` and `qd.reset`, and only by them: the fields made before are
dropped."""
history: dict[str, Compiled] = {}
"""Latest compile of each kernel, by name: what the next compile of the same name is compared
against."""
tape: Tape | None = None
fwd: FwdMode | None = None
"""The `qd.ad.FwdMode` being entered: kernels launched meanwhile run in forward mode."""
"""The `qd.ad.Tape` being recorded, if any."""
compile_hooks: list[Callable] = []
"""Called as hook(kernel, compiled) after each compile (the notebook views subscribe here)."""
compiled_count = 0
"""Kernel variants compiled since the latest `qd.init` (one per kernel and argument signature:
Quadrants' `get_num_compiled_functions()`)."""
last_launcher: object = None
"""The launcher of the latest kernel launch (its tasks:
`get_num_offloaded_tasks_on_last_call()`)."""
last_yield = -1
"""The internal index of the checkpoint that paused the latest launch of a `checkpoints=True`
kernel, -1 when none did (`get_graph_last_yield_cp_id_on_last_call()`)."""
cleared_groups: set[tuple[int, ...]] = set()
"""The groups of fields whose gradients `qd.ad.clear_all_gradients` has cleared since the latest
`qd.init`: Quadrants compiles a kernel for each new group, which `compiled_count` counts."""
LOG_LEVELS = {
    "trace": logging.DEBUG - 5,
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "warn": logging.WARNING,
    "warning": logging.WARNING,
    "error": logging.ERROR,
    "critical": logging.CRITICAL,
}
"""Quadrants' level names (`qd.init(log_level=)`, `qd.set_logging_level`) as `logging` levels."""
logging.addLevelName(LOG_LEVELS["trace"], "TRACE")
report_hooks: list[Callable] = []
"""Called as hook(kernel, compiled) when a compile's report gained something (`qd.profile`'s run
times); the visualizer subscribes here too."""


def config() -> Config:
    return _config


def finish_cache() -> None:
    """The program ends (`qd.init`, `qd.reset`, a change of settings, exit): the kernel records it
    made are written and cleaned (`compiler/cache/kernel_records.py`)."""
    records = _cache.kernels if _cache is not None else None
    if records is None and _cache is None and _config.offline_cache:
        records = kernel_records()  # no compile in this program: the cleaning still runs
    if records is not None:
        records.finish()


def kernel_records() -> KernelRecords:
    """The kernel records of the program under the active settings."""
    return KernelRecords(
        cache_dir(),
        max_bytes=int(_config.offline_cache_max_size_mb * 2**20),
        policy=_config.offline_cache_cleaning_policy,
        factor=_config.offline_cache_cleaning_factor,
    )


def cache_dir() -> Path:
    """Where the cache of the active settings lives (`offline_cache_file_path`, else
    `QDLAB_CACHE_DIR`, else the user's qdlab cache folder)."""
    directory = _config.offline_cache_file_path or os.environ.get("QDLAB_CACHE_DIR") or None
    return Path(directory) if directory is not None else default_cache_dir()


atexit.register(finish_cache)


def init(config: Config | None = None) -> Config:
    """Start a new program under `config` (the defaults when None)."""
    global _config, _cache, generation, compiled_count, epoch, last_launcher, last_yield
    config = config if config is not None else make_config()
    finish_cache()
    _config = config
    epoch += 1
    if _config.remote_cache:
        remote.prefetch()
    matrix.DEFAULTS["fp"] = _config.default_fp
    matrix.DEFAULTS["ip"] = _config.default_ip
    matrix.DEFAULTS["up"] = DTYPES[f"u{_config.default_ip.bits}"]
    _cache = None
    generation += 1
    compiled_count = 0
    last_launcher, last_yield = None, -1
    cleared_groups.clear()
    runtime.set_threads(_config.cpu_max_num_threads)
    runtime.kernel_mode()  # flush-to-zero from here on this thread, NumPy included, as Quadrants
    if _config.log_level is not None:
        log.setLevel(LOG_LEVELS[_config.log_level.lower()])
    return _config


def replace(config: Config) -> None:
    """Make `config` the active one without a new `qd.init` (`qd.cfg.<name> = value`); kernels
    recompile under it when it changes what they compile to."""
    global _config, _cache, generation
    if config.as_dict() != _config.as_dict():
        generation += 1
        finish_cache()
        _cache = None
    _config = config


def cache() -> BinaryCache:
    global _cache
    if _cache is None:
        team = (
            remote.tier(_config.remote_cache, _config.remote_cache_prefix)
            if _config.remote_cache
            else None
        )
        _cache = BinaryCache(
            cache_dir(),
            disk=_config.offline_cache,
            max_size_mb=_config.offline_cache_max_size_mb,
            remote=team,
        )
        if _cache.persistent:
            _cache.kernels = kernel_records()
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
