"""`qd.init` settings: one frozen record, replaced (never mutated) by each `qd.init` call."""

from __future__ import annotations

import difflib
import os
from dataclasses import asdict, dataclass, fields
from functools import cached_property

from .errors import QdInitOptionError
from .inert import INERT, RENAMED
from .types import DType, f32, f64, i32

ARCHS = ("cpu", "cuda")
"""The targets `Config.arch` names; `qd.init` resolves Quadrants' arch names to one of them."""
LOG_LEVELS = ("trace", "debug", "info", "warn", "warning", "error", "critical")


@dataclass(frozen=True)
class Config:
    """The active compiler and runtime settings."""

    arch: str = "cpu"
    debug: bool = False
    """Bounds checks and `assert` in kernels."""
    check_out_of_bound: bool = False
    """Bounds checks alone."""
    opt_level: int = 3
    random_seed: int = 0
    default_fp: DType = f32
    """The type of float literals and `float` annotations."""
    default_ip: DType = i32
    """The type of integer literals and `int` annotations."""
    offline_cache: bool = True
    """Use the on-disk tier of the construct cache."""
    offline_cache_file_path: str | None = None
    offline_cache_max_size_mb: float = 1024.0
    offline_cache_cleaning_policy: str = "lru"
    """What the kernel records (`compiler/cache/kernel_records.py`) drop when the program ends
    over the size limit: "never", "version" (those of another qdlab), "lru", "fifo"."""
    offline_cache_cleaning_factor: float = 0.25
    """The fraction of the kernel records "lru" / "fifo" drop then."""
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
    raise_on_templated_floats: bool = False
    """A float passed for a `qd.Template` parameter is a ValueError (each value recompiles)."""
    log_level: str | None = None
    """The `qdlab` logger's level, when given."""
    ad_stack_experimental_enabled: bool = False
    """Gradient kernels may differentiate a `range` loop nested in another loop (Quadrants keeps a
    stack of each loop-carried value for it; qdlab re-runs the loop: `passes/autodiff.py`)."""
    ad_stack_size: int = 0
    """With `debug=True`, the most values a loop-carried variable's stack holds in one thread of a
    gradient kernel (0: as many as needed); more is an "Adstack overflow" error."""
    inert: tuple[tuple[str, object], ...] = ()
    """The options given that have no effect in qdlab (`inert.INERT`), as (name, value)."""

    @property
    def bounds_checks(self) -> bool:
        return self.debug or self.check_out_of_bound

    def codegen_key(self) -> str:
        """The settings that change generated code (part of every cache key)."""
        return f"opt={self.opt_level};debug={int(self.bounds_checks)}"

    def as_dict(self) -> dict:
        """The settings that act, by name (the inert ones are left out: they change nothing); a
        copy of `_settings`, made once (a compile asks several times)."""
        return dict(self._settings)

    @cached_property
    def _settings(self) -> dict:
        d = asdict(self)
        del d["inert"]
        d["default_fp"] = str(self.default_fp)
        d["default_ip"] = str(self.default_ip)
        return d

    def compile_settings(self) -> dict:
        """The settings a compile may depend on (what a manifest is keyed on): all but
        LOCAL_SETTINGS, so two machines with their own cache folders share one team cache."""
        return {k: v for k, v in self.as_dict().items() if k not in LOCAL_SETTINGS}

    def option(self, name: str) -> object:
        """The value of a `qd.init` option: a setting, or an inert option as given (else
        Quadrants' default); KeyError for a name neither has."""
        if name in SETTINGS:
            return getattr(self, name)
        if name in RENAMED:
            field_name, factor = RENAMED[name]
            return round(getattr(self, field_name) / factor)
        given = dict(self.inert)
        return given[name] if name in given else INERT[name]

    def with_option(self, name: str, value: object) -> Config:
        """This config with one `qd.init` option changed (`qd.cfg.<name> = value`)."""
        options = {f: getattr(self, f) for f in SETTINGS if f != "inert"} | dict(self.inert)
        return make_config(**(options | {name: value}))


LOCAL_SETTINGS = (
    "offline_cache",
    "offline_cache_file_path",
    "offline_cache_max_size_mb",
    "offline_cache_cleaning_policy",
    "offline_cache_cleaning_factor",
    "remote_cache",
    "remote_cache_prefix",
    "debug_dump_path",
    "cpu_max_num_threads",
    "log_level",
)
"""Settings of where things are kept and how many threads run, which no compiled code depends on."""

SETTINGS = tuple(f.name for f in fields(Config))
KNOWN = sorted({*SETTINGS, *INERT, *RENAMED} - {"inert", "fresh"})
"""Every option `qd.init` takes: qdlab's settings, Quadrants' inert ones and the renamed ones."""


def make_config(**kwargs: object) -> Config:
    """The config `qd.init(**kwargs)` makes: unknown names are Quadrants' KeyError (also a
    TypeError) naming the closest known option; Quadrants' inert options are recorded; `arch` is
    a target name ("cpu", "cuda")."""
    if "default_up" in kwargs:
        raise QdInitOptionError(  # Quadrants' KeyError and words
            "'default_up' is always the unsigned type of 'default_ip'. Please set 'default_ip' "
            "instead."
        )
    unknown = [k for k in kwargs if k not in {*SETTINGS, *INERT, *RENAMED, "inert"}]
    if unknown:
        hints = [difflib.get_close_matches(u, KNOWN, n=1) for u in unknown]
        raise QdInitOptionError(
            f"Unrecognized keyword argument(s) for qd.init: {', '.join(unknown)}"
            + "".join(f"; did you mean `{h[0]}`?" for h in hints if h)
            + f" (known: {', '.join(KNOWN)})"
        )
    inert = tuple(sorted((k, kwargs.pop(k)) for k in list(kwargs) if k in INERT))
    for name, (field_name, factor) in RENAMED.items():
        if name in kwargs:
            kwargs[field_name] = kwargs.pop(name) * factor  # type: ignore[operator]
    arch = kwargs.get("arch", "cpu")
    if arch not in ARCHS:
        raise ValueError(f"Config.arch must be one of {', '.join(ARCHS)}, not {arch!r}")
    if "1" in (os.environ.get("QDLAB_DUMP_IR"), os.environ.get("QD_DUMP_IR")):
        kwargs.setdefault("dump_ir", True)
    if os.environ.get("QDLAB_DUMP_CFG") == "1":
        kwargs.setdefault("dump_cfg", True)
    if os.environ.get("QDLAB_REMOTE_CACHE"):
        kwargs.setdefault("remote_cache", os.environ["QDLAB_REMOTE_CACHE"])
    if os.environ.get("QDLAB_REMOTE_CACHE_PREFIX"):
        kwargs.setdefault("remote_cache_prefix", os.environ["QDLAB_REMOTE_CACHE_PREFIX"])
    if kwargs.get("default_fp") is None:
        kwargs.pop("default_fp", None)
    if kwargs.get("default_ip") is None:
        kwargs.pop("default_ip", None)
    if kwargs.get("default_fp", f32) not in (f32, f64):
        raise ValueError(f"default_fp must be qd.f32 or qd.f64, not {kwargs['default_fp']!r}")
    ip = kwargs.get("default_ip", i32)
    if not (isinstance(ip, DType) and ip.is_int and ip.bits > 1):
        raise ValueError(f"default_ip must be an integer type such as qd.i64, not {ip!r}")
    level = kwargs.get("log_level")
    if level is not None and str(level).lower() not in LOG_LEVELS:
        raise ValueError(f"log_level must be one of {', '.join(LOG_LEVELS)}, not {level!r}")
    return Config(**kwargs, inert=inert)  # type: ignore[arg-type]


def sm_number(sm: str | int) -> int:
    """A CUDA compute capability as a number: 90 for 'sm_90', 'compute_90', 'sm_90a' or 90."""
    text = str(sm).removeprefix("sm_").removeprefix("compute_")
    digits = text.rstrip("af")
    if not digits.isdigit():
        raise ValueError(f"compute capability must look like 'sm_80' or 90, not {sm!r}")
    return int(digits)
