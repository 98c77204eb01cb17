"""`qd.perf_dispatch` (also at Quadrants' path `qd.lang._perf_dispatch`): a meta-function with
several registered implementations, of which each call runs one; while measuring, the compatible
ones take turns (the fewest trials first), each timed between two `qd.sync()`s after its warm-up
calls (once every construct compiled so far runs its optimised code: `compiler/runtime/tiers.py`),
and the fastest (mean time) is used from then on for that geometry
(`get_geometry_hash(*args, **kwargs)`), until `repeat_after_count` calls or `repeat_after_seconds`
seconds restart the measurement. The semantics are Quadrants': one compatible implementation is
used without timing; none is a QuadrantsRuntimeError; `QD_PERFDISPATCH_FORCE=dispatcher:impl,...`,
read when this module is imported (`_FORCE_MAP`), pins implementations by function name. The
attribute names are the reference's, which its tests inspect.
"""

from __future__ import annotations

import inspect
import os
import time
from collections import defaultdict
from collections.abc import Callable

from ..compiler.runtime import tiers
from ..core.errors import QuadrantsRuntimeError, QuadrantsSyntaxError
from . import api

NUM_FIRST_WARMUP = 1
NUM_WARMUP = 0
NUM_ACTIVE = 1
DEFAULT_REPEAT_AFTER_COUNT = 300  # when neither repeat trigger is given
QD_PERFDISPATCH_PRINT_DEBUG = os.environ.get("QD_PERFDISPATCH_PRINT_DEBUG", "0") == "1"


def _parse_force_map(raw: str | None) -> dict[str, str]:
    """`QD_PERFDISPATCH_FORCE`: 'dispatcher1:impl1,dispatcher2:impl2'."""
    out: dict[str, str] = {}
    for pair in (raw or "").split(","):
        pair = pair.strip()
        if not pair:
            continue
        if ":" not in pair:
            raise ValueError(
                f"Malformed QD_PERFDISPATCH_FORCE entry '{pair}'. Expected format: "
                "'dispatcher:impl'."
            )
        name, impl = (p.strip() for p in pair.split(":", 1))
        out[name] = impl
    return out


_FORCE_MAP: dict[str, str] = _parse_force_map(os.environ.get("QD_PERFDISPATCH_FORCE"))
_ANY_FORCE_ACTIVE: bool = bool(_FORCE_MAP)


def _mismatch(msg: str) -> QuadrantsSyntaxError:
    return QuadrantsSyntaxError(f"{msg} (error code: PERFDISPATCH_ANNOTATION_SEQUENCE_MISMATCH).")


def _name(fn: Callable) -> str:
    inner = getattr(fn, "fn", fn)  # a kernel or func: the Python function it wraps
    return getattr(inner, "__name__", getattr(fn, "__name__", repr(fn)))


def _params(fn: Callable) -> list[str]:
    inner = getattr(fn, "fn", fn)  # a kernel or func: the Python function it wraps
    return list(inspect.signature(inner).parameters)


class DispatchImpl:
    """One registered implementation (a kernel, a func or a plain function) and its guard."""

    def __init__(self, fn: Callable, is_compatible: Callable | None) -> None:
        self.fn = fn
        self.is_compatible = is_compatible
        self.__wrapped__ = fn
        self.__name__ = _name(fn)

    def __call__(self, *args: object, **kwargs: object) -> object:
        return self.fn(*args, **kwargs)

    def get_implementation2(self) -> Callable:
        """The Python function underneath (Quadrants' name for it)."""
        return getattr(self.fn, "fn", self.fn)


class PerformanceDispatcher:
    def __init__(
        self,
        get_geometry_hash: Callable,
        fn: Callable,
        num_first_warmup: int | None = None,
        num_warmup: int | None = None,
        num_active: int | None = None,
        repeat_after_count: int | None = None,
        repeat_after_seconds: float | None = None,
    ) -> None:
        self.__name__ = self._name = fn.__name__
        self.__doc__ = fn.__doc__
        self._params = _params(fn)
        self._get_geometry_hash = get_geometry_hash
        self.num_first_warmup = NUM_FIRST_WARMUP if num_first_warmup is None else num_first_warmup
        self.num_warmup = NUM_WARMUP if num_warmup is None else num_warmup
        self.num_active = NUM_ACTIVE if num_active is None else num_active
        # Two OR'd restart triggers: None lets the dispatcher choose, <= 0 disables; with both
        # None, a count alone.
        if repeat_after_count is None and repeat_after_seconds is None:
            repeat_after_count = DEFAULT_REPEAT_AFTER_COUNT
        self.repeat_after_count = repeat_after_count
        self.repeat_after_seconds = repeat_after_seconds
        self._dispatch_impls: list[DispatchImpl] = []
        self._forced_impl: DispatchImpl | None = None
        self._force_resolved = False
        self._trial_count_by_dispatch_impl_by_geometry_hash: dict = defaultdict(
            lambda: defaultdict(int)
        )
        self._times_by_dispatch_impl_by_geometry_hash: dict = defaultdict(lambda: defaultdict(list))
        self._fastest_dispatch_impl_by_geometry_hash: dict = {}
        self._calls_since_last_update_by_geometry_hash: dict = defaultdict(int)
        self._last_check_time_by_geometry_hash: dict = defaultdict(float)
        self._first_eval_completed: set = set()
        self._cached: tuple | None = None  # (args, kwargs, impl): the lone compatible one

    def register(
        self, implementation: Callable | None = None, *, is_compatible: Callable | None = None
    ) -> object:
        """`@dispatcher.register` / `@dispatcher.register(is_compatible=...)`: its parameters must
        be the prototype's, by name and number."""

        def decorator(fn: Callable) -> DispatchImpl:
            names = _params(fn)
            if QD_PERFDISPATCH_PRINT_DEBUG or _ANY_FORCE_ACTIVE:
                print(f"perf_dispatch '{self._name}': registered '{_name(fn)}'")
            for n in names:
                if n not in self._params:
                    raise _mismatch(
                        f"Signature parameter {n} of function not in perf_dispatch function "
                        "prototype"
                    )
            if len(names) != len(self._params):
                raise _mismatch(
                    f"Number of function parameters {len(names)} doesn't match number of "
                    f"parameters in perf_dispatch function prototype {len(self._params)}"
                )
            impl = DispatchImpl(fn, is_compatible)
            self._dispatch_impls.append(impl)
            return impl

        return decorator(implementation) if implementation is not None else decorator

    def _resolve_force(self) -> None:
        """On the first call, once every implementation is registered."""
        if self._force_resolved:
            return
        self._force_resolved = True
        if not _ANY_FORCE_ACTIVE:
            return
        avail = ", ".join(f"'{i.__name__}'" for i in self._dispatch_impls)
        print(f"perf_dispatch '{self._name}': available implementations: [{avail}]")
        wanted = _FORCE_MAP.get(self._name)
        if wanted is None:
            return
        for impl in self._dispatch_impls:
            if impl.__name__ == wanted:
                self._forced_impl = impl
                print(
                    f"perf_dispatch '{self._name}': forced to '{wanted}' via QD_PERFDISPATCH_FORCE"
                )
                return
        print(
            f"[perf_dispatch] WARNING: QD_PERFDISPATCH_FORCE requested '{wanted}' for "
            f"'{self._name}', but no such implementation found. Available: [{avail}]. "
            "Falling back to normal benchmarking."
        )

    def _chose(self, impl: DispatchImpl, note: str = "") -> None:
        if QD_PERFDISPATCH_PRINT_DEBUG:
            print(
                f"perf_dispatch '{self._name}': chose '{impl.__name__}' out of "
                f"{len(self._dispatch_impls)} registered functions.{note}"
            )

    def __call__(self, *args: object, **kwargs: object) -> object:
        self._resolve_force()
        if self._forced_impl is not None:
            return self._forced_impl(*args, **kwargs)
        if self._cached is not None:
            ca, ck, impl = self._cached
            if (
                len(args) == len(ca)
                and len(kwargs) == len(ck)
                and all(a is b for a, b in zip(args, ca))
                and all(k in ck and v is ck[k] for k, v in kwargs.items())
            ):
                return impl(*args, **kwargs)
        geometry = self._get_geometry_hash(*args, **kwargs)
        fastest = self._fastest_dispatch_impl_by_geometry_hash.get(geometry)
        if fastest is not None:
            restart = False
            count = self.repeat_after_count
            if count is not None and count > 0:
                self._calls_since_last_update_by_geometry_hash[geometry] += 1
                restart = self._calls_since_last_update_by_geometry_hash[geometry] >= count
            seconds = self.repeat_after_seconds
            last = self._last_check_time_by_geometry_hash[geometry]
            if seconds is not None and seconds > 0 and time.time() - last >= seconds:
                restart = True
            if not restart:
                return fastest(*args, **kwargs)
            self._times_by_dispatch_impl_by_geometry_hash[geometry].clear()
            self._trial_count_by_dispatch_impl_by_geometry_hash[geometry].clear()
            del self._fastest_dispatch_impl_by_geometry_hash[geometry]
            self._calls_since_last_update_by_geometry_hash[geometry] = 0
        compatible = [
            i
            for i in self._dispatch_impls
            if not i.is_compatible or i.is_compatible(*args, **kwargs)
        ]
        if not compatible:
            raise QuadrantsRuntimeError("No suitable functions were found.")
        if len(compatible) == 1:
            impl = compatible[0]
            self._fastest_dispatch_impl_by_geometry_hash[geometry] = impl
            self._last_check_time_by_geometry_hash[geometry] = time.time()
            self._cached = (args, kwargs, impl)
            self._chose(impl, " Only 1 was compatible.")
            return impl(*args, **kwargs)
        trials = self._trial_count_by_dispatch_impl_by_geometry_hash[geometry]
        impl = min(compatible, key=lambda i: trials.get(i, 0))  # the fewest trials, first wins
        least = trials.get(impl, 0)
        trials[impl] += 1
        first = geometry not in self._first_eval_completed
        warm = self.num_first_warmup if first else self.num_warmup
        if least < warm:
            return impl(*args, **kwargs)
        api.sync()
        tiers.settle_all()  # a trial times optimised code, not the quick objects of a compile
        start = time.time()
        out = impl(*args, **kwargs)
        api.sync()
        times = self._times_by_dispatch_impl_by_geometry_hash[geometry]
        times[impl].append(time.time() - start)
        if len(trials) >= len(compatible) and min(trials.values()) >= warm + self.num_active:
            best = min(times, key=lambda i: sum(times[i]) / len(times[i]))
            self._fastest_dispatch_impl_by_geometry_hash[geometry] = best
            self._first_eval_completed.add(geometry)
            self._last_check_time_by_geometry_hash[geometry] = time.time()
            self._chose(best)
        return out


def perf_dispatch(
    *,
    get_geometry_hash: Callable,
    first_warmup: int = NUM_FIRST_WARMUP,
    warmup: int = NUM_WARMUP,
    active: int = NUM_ACTIVE,
    repeat_after_count: int | None = None,
    repeat_after_seconds: float | None = None,
) -> Callable[[Callable], PerformanceDispatcher]:
    """`@qd.perf_dispatch(get_geometry_hash=...)` over a prototype (its body unused);
    implementations join with `@proto.register(is_compatible=...)`. See the module's docstring."""

    def decorator(fn: Callable) -> PerformanceDispatcher:
        return PerformanceDispatcher(
            get_geometry_hash,
            fn,
            first_warmup,
            warmup,
            active,
            repeat_after_count,
            repeat_after_seconds,
        )

    return decorator
