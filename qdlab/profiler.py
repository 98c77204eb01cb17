"""`qd.profiler`: Quadrants' profiler functions, by name.

Quadrants' kernel profiler (`qd.init(kernel_profiler=True)`) times every launch in its runtime;
qdlab keeps no such record, so here the kernel profiler holds no records: its queries answer
empty (a total of 0.0 s) and its reports say so and point to `qd.profile(kernel, *args)`, which
times each construct of a kernel. The scoped and memory profilers report the same way. The CUPTI
metrics (CUDA-only in Quadrants) are accepted and listed.
"""

from __future__ import annotations

from dataclasses import dataclass, field

NO_RECORDS = (
    "qdlab keeps no kernel profiler records; qd.profile(kernel, *args) times each construct "
    "of a kernel."
)


@dataclass
class CuptiMetric:
    """A CUPTI metric for Quadrants' CUDA kernel profiler (recorded, not collected, in qdlab)."""

    name: str = ""
    header: str = ""
    val_format: str = "     {:8.0f} "
    scale: float = 1.0


@dataclass
class KernelProfilerQueryResult:
    """What `query_kernel_profiler_info(name)` answers: launch count and times in ms."""

    counter: int = 0
    min: float = 0.0
    max: float = 0.0
    avg: float = 0.0


@dataclass
class _State:
    toolkit: str = "default"
    metrics: list[CuptiMetric] = field(default_factory=list)


_state = _State()


def print_kernel_profiler_info(mode: str = "count") -> None:
    """Quadrants prints its kernel profiler's records ("count" or "trace")."""
    if mode not in ("count", "trace"):
        raise ValueError(f"print_kernel_profiler_info(mode) is 'count' or 'trace', not {mode!r}")
    print(NO_RECORDS)


def query_kernel_profiler_info(name: str) -> KernelProfilerQueryResult:
    return KernelProfilerQueryResult()


def clear_kernel_profiler_info() -> None:
    """Clears the kernel profiler's records (there are none in qdlab)."""


def get_kernel_profiler_total_time() -> float:
    """The total time of the recorded launches, in seconds: 0.0, with no records."""
    return 0.0


def set_kernel_profiler_toolkit(toolkit_name: str = "default") -> bool:
    """Quadrants' toolkits are "default" and "cupti" (CUDA only); qdlab has the default one."""
    if toolkit_name != "default":
        return False
    _state.toolkit = toolkit_name
    return True


def set_kernel_profiler_metrics(metric_list: list[CuptiMetric] | None = None) -> None:
    _state.metrics = list(metric_list or [])


def collect_kernel_profiler_metrics(metric_list: list[CuptiMetric] | None = None) -> None:
    set_kernel_profiler_metrics(metric_list)


def get_predefined_cupti_metrics(name: str = "") -> list[CuptiMetric]:
    return []


def print_scoped_profiler_info() -> None:
    print(NO_RECORDS)


def clear_scoped_profiler_info() -> None:
    """Clears the scoped profiler's records (there are none in qdlab)."""


def print_memory_profiler_info() -> None:
    print(NO_RECORDS)


__all__ = [
    "CuptiMetric",
    "clear_kernel_profiler_info",
    "clear_scoped_profiler_info",
    "collect_kernel_profiler_metrics",
    "get_kernel_profiler_total_time",
    "get_predefined_cupti_metrics",
    "print_kernel_profiler_info",
    "print_memory_profiler_info",
    "print_scoped_profiler_info",
    "query_kernel_profiler_info",
    "set_kernel_profiler_metrics",
    "set_kernel_profiler_toolkit",
]
