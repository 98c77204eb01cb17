"""`qd.init` settings: one frozen record, replaced (never mutated) by each `qd.init` call."""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, fields

from .types import DType, f32, f64

ARCHS = ("cpu", "x64", "arm64", "cuda", "gpu")


@dataclass(frozen=True)
class Config:
    """The active compiler and runtime settings."""

    arch: str = "cpu"
    debug: bool = False
    """Bounds checks and `assert` in kernels."""
    opt_level: int = 3
    random_seed: int = 0
    default_fp: DType = f32
    offline_cache: bool = True
    """Use the on-disk tier of the construct cache."""
    offline_cache_file_path: str | None = None
    offline_cache_max_size_mb: float = 1024.0
    per_offload: bool = True
    """Compile kernels construct by construct (False: always whole-kernel)."""
    split_carried: bool = True
    fresh: bool = False
    """Compile every construct anew, reusing nothing already cached or loaded
    (`%%qdkernel --no-cache`)."""
    print_ir: bool = False
    debug_dump_path: str | None = None
    dump_ir: bool = False
    dump_cfg: bool = False
    """Write a control-flow graph of each kernel; needs the whole kernel (diagnostic_mode)."""
    kernel_coverage: bool = False
    cpu_max_num_threads: int | None = None
    unrolling_limit: int = 1024
    remote_cache: str | None = None
    """The team cache: `redis://[:password@]host:port/db` or `rediss://...` (TLS);
    QDLAB_REMOTE_CACHE."""
    remote_cache_prefix: str = "qdlab"
    """The team's (or project's) namespace in the store; QDLAB_REMOTE_CACHE_PREFIX."""

    def codegen_key(self) -> str:
        """The settings that change generated code (part of every cache key)."""
        return f"opt={self.opt_level};debug={int(self.debug)}"

    def as_dict(self) -> dict:
        d = asdict(self)
        d["default_fp"] = str(self.default_fp)
        return d

    def compile_settings(self) -> dict:
        """The settings a compile may depend on (what a manifest is keyed on): all but
        LOCAL_SETTINGS, so two machines with their own cache folders share one team cache."""
        return {k: v for k, v in self.as_dict().items() if k not in LOCAL_SETTINGS}


LOCAL_SETTINGS = (
    "offline_cache",
    "offline_cache_file_path",
    "offline_cache_max_size_mb",
    "remote_cache",
    "remote_cache_prefix",
    "debug_dump_path",
    "cpu_max_num_threads",
)
"""Settings of where things are kept and how many threads run, which no compiled code depends on."""


def make_config(**kwargs: object) -> Config:
    names = {f.name for f in fields(Config)}
    unknown = sorted(set(kwargs) - names)
    if unknown:
        raise TypeError(
            f"qd.init() got unknown option(s) {', '.join(unknown)}; known: "
            f"{', '.join(sorted(names))}"
        )
    arch = kwargs.get("arch", "cpu")
    arch = getattr(arch, "name", arch)
    if arch not in ARCHS:
        raise ValueError(f"qd.init(arch=...) must be one of {', '.join(ARCHS)}, not {arch!r}")
    kwargs["arch"] = "cpu" if arch in ("x64", "arm64") else arch
    if os.environ.get("QDLAB_DUMP_IR") == "1":
        kwargs.setdefault("dump_ir", True)
    if os.environ.get("QDLAB_DUMP_CFG") == "1":
        kwargs.setdefault("dump_cfg", True)
    if os.environ.get("QDLAB_REMOTE_CACHE"):
        kwargs.setdefault("remote_cache", os.environ["QDLAB_REMOTE_CACHE"])
    if os.environ.get("QDLAB_REMOTE_CACHE_PREFIX"):
        kwargs.setdefault("remote_cache_prefix", os.environ["QDLAB_REMOTE_CACHE_PREFIX"])
    fp = kwargs.get("default_fp", f32)
    if fp not in (f32, f64):
        raise ValueError("default_fp must be qd.f32 or qd.f64")
    return Config(**kwargs)  # type: ignore[arg-type]


def sm_number(sm: str | int) -> int:
    """A CUDA compute capability as a number: 90 for 'sm_90', 'compute_90', 'sm_90a' or 90."""
    text = str(sm).removeprefix("sm_").removeprefix("compute_")
    digits = text.rstrip("af")
    if not digits.isdigit():
        raise ValueError(f"compute capability must look like 'sm_80' or 90, not {sm!r}")
    return int(digits)
