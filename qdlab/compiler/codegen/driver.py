"""The CPU's task driver: one native function that calls a launch's tasks in order, so that a split
kernel's constructs cost the host one ctypes call per launch instead of one per task.

A task called alone (chunk 0 of 0) runs a serial task or a short loop and returns 0, or returns
its iterations (> 1) for the host to cut into chunks on the thread pool, or 1 after it recorded an
error. The driver calls the tasks of a table from `first` until one returns non-zero or reported an
integer overflow (the host sets the header's HDR_STOP word from the print callback, debug only);
it writes the index it stopped at (or `end`) and returns that task's status, and the host takes
over for that task (`runtime.Launcher.after`) and calls the driver again from the next.
`CpuTarget.driver` builds it once per target and caches it like a construct's object
(`nounwind`: no unwind tables, which qdlab's loader does not take); a process that compiles
nothing and finds no object in the cache calls each task itself rather than start LLVM for it.
"""

from __future__ import annotations

from ...core.abi import HDR_STOP

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
