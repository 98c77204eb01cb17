"""The CPU's task driver: one native function that calls a launch's tasks in order, so that a split
kernel's constructs cost the host one ctypes call per launch instead of one per task.

A task called alone (chunk 0 of 0) runs a serial task or a short loop and returns 0, or returns
its iterations (> 1) for the host to cut into chunks on the thread pool, or 1 after it recorded an
error. The driver calls the tasks of a table from `first` until one returns non-zero or reported an
integer overflow (the host sets the header's HDR_STOP word from the print callback, debug only);
it writes the index it stopped at (or `end`) and returns that task's status, and the host takes
over for that task (`runtime.Launcher.after`) and calls the driver again from the next. Built once
per target and cached like a construct's object (`nounwind`: no unwind tables, which qdlab's
loader does not take); a process that compiles nothing and finds no
object in the cache keeps calling each task itself rather than start LLVM for it.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

from ...core import keys
from ...core.abi import HDR_STOP
from .. import runtime
from . import server

if TYPE_CHECKING:
    from ..cache import BinaryCache

SYMBOL = "qdlab_drive"
TEXT = f"""
define i64 @{SYMBOL}(i64* %table, i64 %first, i64 %end, i8* %words, i8* %tmp, i64* %stopped) #0 {{
entry:
  %stop.p = getelementptr i8, i8* %tmp, i64 {HDR_STOP}
  %stop = bitcast i8* %stop.p to i64*
  %any = icmp slt i64 %first, %end
  br i1 %any, label %loop, label %done
loop:
  %i = phi i64 [ %first, %entry ], [ %next, %go ]
  %slot = getelementptr i64, i64* %table, i64 %i
  %address = load i64, i64* %slot
  %task = inttoptr i64 %address to i64 (i8*, i8*, i64, i64)*
  %status = call i64 %task(i8* %words, i8* %tmp, i64 0, i64 0)
  %flag = load volatile i64, i64* %stop
  %either = or i64 %status, %flag
  %host = icmp ne i64 %either, 0
  br i1 %host, label %hand, label %go
go:
  %next = add i64 %i, 1
  %more = icmp slt i64 %next, %end
  br i1 %more, label %loop, label %done
hand:
  store i64 %i, i64* %stopped
  ret i64 %status
done:
  store i64 %end, i64* %stopped
  ret i64 0
}}

attributes #0 = {{ nounwind }}
"""
_loaded: list = []
"""The driver of this process, once loaded (a `runtime.DRIVE_FN`)."""


def get(cache: BinaryCache | None, target_parts: tuple[str, ...]) -> Callable[..., int] | None:
    """The task driver: loaded once per process, from the cache or built (and cached); None when
    it is in neither and this process has not started LLVM nor has a compile server to ask."""
    if _loaded:
        return _loaded[0]
    key = keys.runtime_key(TEXT, target_parts)
    obj = cache.get(key) if cache is not None else None
    if obj is None:
        if "llvmlite.binding" not in sys.modules and not server.listening():
            return None
        from . import targets  # lazy: targets imports this module

        obj = targets.compile_one(TEXT, 2)[0]
        if cache is not None:
            cache.put(key, obj)
    from . import targets  # lazy: targets imports this module

    ((address,),) = targets.link([(obj, [SYMBOL])])
    _loaded.append(runtime.DRIVE_FN(address))
    return _loaded[0]
