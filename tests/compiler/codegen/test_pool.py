"""The compile pool: objects in order whatever the workers do, errors in making IR never swallowed,
and a process whose kernels all come from the cache never starts (or imports) it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from qdlab.compiler.codegen import jit, pool
from qdlab.core.errors import QdError

LOOP = """define i64 @qd_t{k}(float* %p, i64 %n) {{
entry:
  br label %loop
loop:
  %i = phi i64 [0, %entry], [%j, %loop]
  %a = getelementptr float, float* %p, i64 %i
  %v = load float, float* %a
  %w = fmul float %v, {k}.0
  store float %w, float* %a
  %j = add i64 %i, 1
  %c = icmp slt i64 %j, %n
  br i1 %c, label %loop, label %done
done:
  ret i64 {k}
}}
"""


def texts(n: int) -> list[str]:
    return [LOOP.format(k=k) for k in range(n)]


@pytest.mark.parametrize("workers", ["1", "2"])
def test_objects_come_back_in_order_from_a_generator(
    monkeypatch: pytest.MonkeyPatch, workers: str
) -> None:
    monkeypatch.setenv("QDLAB_COMPILE_WORKERS", workers)
    made, told = [], []

    def lazily():
        for t in texts(9):
            made.append(t)
            yield t

    out = pool.compile_many(lazily(), 9, 3, told.append)
    assert told == list(range(9))
    here = [jit.compile_text(t, 3)[0] for t in texts(9)]
    assert [obj for obj, _ in out] == here  # the same bytes, in the same order, as in-process
    assert len(made) == 9


def test_an_error_while_making_ir_propagates(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("QDLAB_COMPILE_WORKERS", "2")

    def failing():
        yield from texts(3)
        raise QdError("emission failed")

    with pytest.raises(QdError, match="emission failed"):
        pool.compile_many(failing(), 6, 3)


class _Refusing:
    def submit(self, *args: object, **kwargs: object) -> None:
        raise RuntimeError("no workers today")


class _Dying:
    def submit(self, *args: object, **kwargs: object):
        from concurrent.futures import Future  # lazy: only this test's fake

        f: Future = Future()
        f.set_exception(RuntimeError("worker died"))
        return f


@pytest.mark.parametrize("fake", [_Refusing, _Dying])
def test_a_broken_pool_compiles_everything_here(monkeypatch: pytest.MonkeyPatch, fake) -> None:
    monkeypatch.setenv("QDLAB_COMPILE_WORKERS", "2")
    monkeypatch.setattr(pool, "_pool", fake())
    out = pool.compile_many(iter(texts(8)), 8, 2)
    assert [obj for obj, _ in out] == [jit.compile_text(t, 2)[0] for t in texts(8)]
    assert pool._pool is None  # the next compile makes a new pool


def test_batches_cover_every_text() -> None:
    for n in (1, 4, 7, 50):
        batches = list(pool._batches(iter(range(n)), pool.batch_size(n)))
        assert [x for b in batches for x in b] == list(range(n))


SCRIPT = """
import json, sys
import numpy as np
import qdlab as qd
qd.init(arch=qd.cpu, offline_cache=True, offline_cache_file_path={cache!r})

@qd.kernel
def kern(x: qd.types.NDArray[qd.f32, 1], y: qd.types.NDArray[qd.f32, 1]):
{loops}

x = np.arange(8, dtype=np.float32)
y = np.zeros(8, dtype=np.float32)
kern(x, y)
print(json.dumps({{"y": y.tolist(), "pool": "qdlab.compiler.codegen.pool" in sys.modules,
                  "mp": "multiprocessing" in sys.modules}}))
"""


@pytest.mark.process
def test_an_all_hit_process_never_imports_the_pool(tmp_path: Path) -> None:
    loops = "".join(
        f"    for i in range(x.shape[0]):\n        y[i] += x[i] * {k + 1}\n" for k in range(6)
    )
    script = tmp_path / "k.py"
    script.write_text(textwrap.dedent(SCRIPT.format(cache=str(tmp_path / "c"), loops=loops)))
    env = dict(os.environ, QDLAB_COMPILE_WORKERS="2")
    runs = [
        json.loads(
            subprocess.run(
                [sys.executable, str(script)], capture_output=True, text=True, env=env, check=True
            ).stdout.splitlines()[-1]
        )
        for _ in range(2)
    ]
    want = (np.arange(8, dtype=np.float32) * 21).tolist()
    assert runs[0]["y"] == runs[1]["y"] == want
    assert runs[0]["pool"]  # six constructs compiled: the pool was used
    assert not runs[1]["pool"] and not runs[1]["mp"]  # all six loaded from the cache


@pytest.mark.process
def test_a_new_process_editing_one_loop_never_imports_the_pool(tmp_path: Path) -> None:
    runs = []
    for edited in (False, True):
        factors = [k + 1 + 0.5 * (edited and k == 3) for k in range(6)]  # loop 3 edited
        loops = "".join(
            f"    for i in range(x.shape[0]):\n        y[i] += x[i] * {f}\n" for f in factors
        )
        script = tmp_path / "k.py"
        script.write_text(textwrap.dedent(SCRIPT.format(cache=str(tmp_path / "c"), loops=loops)))
        env = dict(os.environ, QDLAB_COMPILE_WORKERS="2")
        out = subprocess.run(
            [sys.executable, str(script)], capture_output=True, text=True, env=env, check=True
        )
        runs.append(json.loads(out.stdout.splitlines()[-1]))
    assert runs[1]["y"] == (np.arange(8, dtype=np.float32) * 21.5).tolist()
    assert runs[0]["pool"]
    assert not runs[1]["pool"] and not runs[1]["mp"]  # one construct compiled, in the process


@pytest.mark.process
def test_workers_leave_when_their_parent_is_killed(tmp_path: Path) -> None:
    """A process killed outright (a notebook kernel restarted) cannot shut its pool down: its
    workers notice and exit by themselves instead of waiting on their queue for ever."""
    script = tmp_path / "parent.py"
    script.write_text(
        textwrap.dedent(
            """
            import os, sys, time
            from qdlab.compiler.codegen import pool
            pool.warm(0)
            time.sleep(0.5)
            print(" ".join(str(p) for p in pool._get_pool()._processes), flush=True)
            time.sleep(600)
            """
        )
    )
    env = dict(os.environ, QDLAB_COMPILE_WORKERS="2")
    parent = subprocess.Popen(
        [sys.executable, str(script)], stdout=subprocess.PIPE, env=env, text=True
    )
    try:
        children = [int(p) for p in parent.stdout.readline().split()]  # type: ignore[union-attr]
        assert len(children) == 2
    finally:
        parent.kill()
        parent.wait()

    def alive(pid: int) -> bool:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"

    deadline = time.monotonic() + 10
    while any(alive(p) for p in children) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not any(alive(p) for p in children)


@pytest.mark.process
def test_workers_yield_the_cpu_to_the_program(tmp_path: Path) -> None:
    """The workers optimise in the background while the program runs (Genesis' first steps, a
    notebook's next cell): they run at a lower priority, so on a two-core machine the program is
    never slowed by its own background compiles (measured: an arm scene's first 20 steps took 2.7 s
    beside them, 1.2 s after)."""
    script = tmp_path / "nice.py"
    script.write_text(
        textwrap.dedent(
            """
            import os, time
            from qdlab.compiler.codegen import pool

            def job():
                time.sleep(0.2)  # the other worker takes the next job
                return os.getpid(), os.getpriority(os.PRIO_PROCESS, 0)

            jobs = [pool._get_pool().submit(job) for _ in range(6)]
            workers = dict(j.result() for j in jobs)  # pid -> its priority
            print(os.getpriority(os.PRIO_PROCESS, 0), *workers.values())
            """
        )
    )
    env = dict(os.environ, QDLAB_COMPILE_WORKERS="2")
    out = subprocess.run(
        [sys.executable, str(script)],
        capture_output=True,
        env=env,
        text=True,
        timeout=120,
        check=True,
    )
    parent, *workers = map(int, out.stdout.split())
    assert len(workers) == 2
    assert workers == [min(parent + pool.WORKER_NICE, 19)] * 2
    assert parent < workers[0]
