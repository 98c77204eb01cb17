"""`qd.perf_dispatch`: a meta-function with several registered implementations, of which each call
runs one; while measuring, the compatible ones take turns (the fewest trials first), each timed
between two `qd.sync()`s after its warm-up calls (once every construct compiled so far runs its
optimised code: `compiler/runtime/tiers.py`), and the fastest (mean time) is used from then on
for that geometry (`get_geometry_hash(*args, **kwargs)`), until `repeat_after_count` calls or
`repeat_after_seconds` seconds restart the measurement. The semantics are Quadrants': one
compatible implementation is used without timing; none is a QuadrantsRuntimeError;
`QD_PERFDISPATCH_FORCE=dispatcher:impl,...` pins implementations by function name.
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

DEFAULT_REPEAT_AFTER_COUNT = 300


def force_map(raw: str | None) -> dict[str, str]:
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


class PerformanceDispatcher:
    def __init__(
        self,
        fn: Callable,
        get_geometry_hash: Callable,
        first_warmup: int,
        warmup: int,
        active: int,
        repeat_after_count: int | None,
        repeat_after_seconds: float | None,
    ) -> None:
        self.__name__ = self._name = fn.__name__
        self.__doc__ = fn.__doc__
        self._params = _params(fn)
        self._geometry = get_geometry_hash
        self.first_warmup, self.warmup, self.active = first_warmup, warmup, active
        if repeat_after_count is None and repeat_after_seconds is None:
            repeat_after_count = DEFAULT_REPEAT_AFTER_COUNT
        self.repeat_after_count = repeat_after_count
        self.repeat_after_seconds = repeat_after_seconds
        self.impls: list[DispatchImpl] = []
        self._forced: DispatchImpl | None = None
        self._force_resolved = False
        self._trials: dict = defaultdict(lambda: defaultdict(int))
        self._times: dict = defaultdict(lambda: defaultdict(list))
        self._fastest: dict = {}
        self._calls: dict = defaultdict(int)
        self._checked_at: dict = defaultdict(float)
        self._evaluated: set = set()
        self._cached: tuple | None = None  # (args, kwargs, impl): the lone compatible one

    def register(
        self, implementation: Callable | None = None, *, is_compatible: Callable | None = None
    ) -> object:
        """`@dispatcher.register` / `@dispatcher.register(is_compatible=...)`: its parameters must
        be the prototype's, by name and number."""

        def decorator(fn: Callable) -> DispatchImpl:
            names = _params(fn)
            for n in names:
                if n not in self._params:
                    raise QuadrantsSyntaxError(
                        f"Signature parameter {n} of function not in perf_dispatch function "
                        "prototype"
                    )
            if len(names) != len(self._params):
                raise QuadrantsSyntaxError(
                    f"Number of function parameters {len(names)} doesn't match number of "
                    f"parameters in perf_dispatch function prototype {len(self._params)}"
                )
            impl = DispatchImpl(fn, is_compatible)
            self.impls.append(impl)
            return impl

        return decorator(implementation) if implementation is not None else decorator

    def _resolve_force(self) -> None:
        if self._force_resolved:
            return
        self._force_resolved = True
        wanted = force_map(os.environ.get("QD_PERFDISPATCH_FORCE")).get(self._name)
        if wanted is not None:
            for impl in self.impls:
                if impl.__name__ == wanted:
                    self._forced = impl
                    return
            print(
                f"[perf_dispatch] WARNING: QD_PERFDISPATCH_FORCE requested '{wanted}' for "
                f"'{self._name}', but no such implementation found. Falling back to normal "
                "benchmarking."
            )

    def __call__(self, *args: object, **kwargs: object) -> object:
        self._resolve_force()
        if self._forced is not None:
            return self._forced(*args, **kwargs)
        if self._cached is not None:
            ca, ck, impl = self._cached
            if (
                len(args) == len(ca)
                and len(kwargs) == len(ck)
                and all(a is b for a, b in zip(args, ca))
                and all(k in ck and v is ck[k] for k, v in kwargs.items())
            ):
                return impl(*args, **kwargs)
        geometry = self._geometry(*args, **kwargs)
        fastest = self._fastest.get(geometry)
        if fastest is not None:
            restart = False
            if self.repeat_after_count is not None and self.repeat_after_count > 0:
                self._calls[geometry] += 1
                restart = self._calls[geometry] >= self.repeat_after_count
            seconds = self.repeat_after_seconds
            if (
                seconds is not None
                and seconds > 0
                and time.time() - self._checked_at[geometry] >= seconds
            ):
                restart = True
            if not restart:
                return fastest(*args, **kwargs)
            self._times[geometry].clear()
            self._trials[geometry].clear()
            del self._fastest[geometry]
            self._calls[geometry] = 0
        compatible = [
            i for i in self.impls if not i.is_compatible or i.is_compatible(*args, **kwargs)
        ]
        if not compatible:
            raise QuadrantsRuntimeError("No suitable functions were found.")
        if len(compatible) == 1:
            impl = compatible[0]
            self._fastest[geometry] = impl
            self._checked_at[geometry] = time.time()
            self._cached = (args, kwargs, impl)
            return impl(*args, **kwargs)
        trials = self._trials[geometry]
        impl = min(compatible, key=lambda i: trials.get(i, 0))  # the fewest trials, first wins
        least = trials.get(impl, 0)
        trials[impl] += 1
        warm = self.first_warmup if geometry not in self._evaluated else self.warmup
        if least < warm:
            return impl(*args, **kwargs)
        api.sync()
        tiers.settle_all()  # a trial times optimised code, not the quick objects of a compile
        start = time.time()
        out = impl(*args, **kwargs)
        api.sync()
        self._times[geometry][impl].append(time.time() - start)
        if len(trials) >= len(compatible) and min(trials.values()) >= warm + self.active:
            times = self._times[geometry]
            self._fastest[geometry] = min(times, key=lambda i: sum(times[i]) / len(times[i]))
            self._evaluated.add(geometry)
            self._checked_at[geometry] = time.time()
        return out


def perf_dispatch(
    *,
    get_geometry_hash: Callable,
    first_warmup: int = 1,
    warmup: int = 0,
    active: int = 1,
    repeat_after_count: int | None = None,
    repeat_after_seconds: float | None = None,
) -> Callable[[Callable], PerformanceDispatcher]:
    """`@qd.perf_dispatch(get_geometry_hash=...)` over a prototype (its body unused);
    implementations join with `@proto.register(is_compatible=...)`. See the module's docstring."""

    def decorator(fn: Callable) -> PerformanceDispatcher:
        return PerformanceDispatcher(
            fn,
            get_geometry_hash,
            first_warmup,
            warmup,
            active,
            repeat_after_count,
            repeat_after_seconds,
        )

    return decorator
