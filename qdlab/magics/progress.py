"""A progress indicator for a cell's compiles that appears only when they take longer than about
half a second.

In a notebook it is an `IntProgress` widget shown by a timer, in the display slot the cell's summary
takes over when compiling ends. On a TTY it is one line on stderr. Anywhere else (pipes, CI logs) it
shows nothing. The compiler reports each construct as it is ready (`Kernel.on_construct`), so the
bar steps per construct of the kernel being compiled, and its label says which kernel of the cell
that is and what it compiled and reused.
"""

from __future__ import annotations

import contextvars
import sys
import threading
import time

from ..core.words import plural

DELAY_S = 0.5


class Progress:
    """Steps through the kernels of one cell; shown only once `DELAY_S` has passed."""

    def __init__(
        self, names: list[str], display_id: str, notebook: bool, delay: float | None = None
    ) -> None:
        self.names = names
        self.display_id = display_id
        self.notebook = notebook
        self.delay = DELAY_S if delay is None else delay
        self.done = 0
        self.ready: dict[str, int] = {}
        """Constructs ready so far, per kernel."""
        self.label = f"compiling {names[0]}" if names else ""
        self.widget: object | None = None
        self.printed = False
        self.finished = False
        self.t0 = time.perf_counter()
        self._lock = threading.Lock()
        self._timer: threading.Timer | None = None

    def start(self) -> None:
        if self.notebook and self.names:
            context = (
                contextvars.copy_context()
            )  # the kernel's parent message, so output lands in this cell
            self._timer = threading.Timer(self.delay, context.run, (self._show,))
            self._timer.daemon = True
            self._timer.start()

    def _show(self) -> None:
        import ipywidgets  # lazy: widgets, only when a compile is slow enough for a bar
        from IPython.display import display  # lazy: IPython

        with self._lock:
            if self.finished:
                return
            bar = ipywidgets.IntProgress(value=0, min=0, max=1)
            self.widget = ipywidgets.HBox([bar, ipywidgets.Label(self.label)])
            display(self.widget, display_id=self.display_id)

    def construct(self, name: str, index: int, total: int, status: str) -> None:
        """Construct `index` of `total` of kernel `name` is ready (`status`: compiled or reused).
        Compiled constructs report as their objects arrive, so the bar counts the constructs
        ready so far rather than following their indices."""
        with self._lock:
            self.ready[name] = ready = self.ready.get(name, 0) + 1
            self.label = (
                f"kernel {self.done + 1}/{len(self.names)} {name}: "
                f"{ready}/{plural(total, 'construct')} "
                f"ready (construct {index} {status})"
            )
            if self.widget is not None:
                bar, label = self.widget.children  # type: ignore[attr-defined]
                bar.max, bar.value, label.value = total, ready, self.label
        if not self.notebook and sys.stderr.isatty() and time.perf_counter() - self.t0 > self.delay:
            sys.stderr.write(f"\r[qdlab] {self.label}\x1b[K")
            sys.stderr.flush()
            self.printed = True

    def step(self, name: str, detail: str) -> None:
        """Kernel `name` finished compiling."""
        with self._lock:
            self.done += 1
            upcoming = f"; compiling {self.names[self.done]}" if self.done < len(self.names) else ""
            self.label = f"{name}: {detail}{upcoming}"
            if self.widget is not None:
                _, label = self.widget.children  # type: ignore[attr-defined]
                label.value = self.label
        if not self.notebook and sys.stderr.isatty() and time.perf_counter() - self.t0 > self.delay:
            sys.stderr.write(f"\r[qdlab {self.done}/{len(self.names)}] {self.label}\x1b[K")
            sys.stderr.flush()
            self.printed = True

    def finish(self) -> bool:
        """Stop; True if the widget was shown (the caller then updates its display slot instead of
        adding one)."""
        with self._lock:
            self.finished = True
            if self._timer is not None:
                self._timer.cancel()
            shown = self.widget is not None
        if self.printed:
            sys.stderr.write("\n")
        return shown

    def close(self) -> None:
        if self.widget is not None:
            self.widget.close()  # type: ignore[attr-defined]
