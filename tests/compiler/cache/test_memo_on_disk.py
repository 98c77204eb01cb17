"""The statement and construct memos keep their entries on the cache's disk tier: a new process
that compiles a kernel with one loop edited replays and serves the others from there, gets the keys
and bits of a compile without either memo, and lowers again what a changed global reaches. An
entry is written and read only as the compiler's own objects (`qdlab/compiler/persist.py`)."""

from __future__ import annotations

import os
import pickle
import textwrap
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from fresh import run_main
from memo_kernels import ASSERTS

from qdlab.compiler import ir
from qdlab.compiler.cache import BinaryCache, persist
from qdlab.core import keys
from qdlab.core.errors import SourceLoc
from qdlab.core.types import f32
from qdlab.host import state

MAIN = """
import json
import numpy as np
import qdlab as qd
from qdlab.compiler.cache import construct_memo, stmt_memo

qd.init(arch=qd.cpu)
C = {c}


@qd.kernel
def k(x: qd.types.NDArray[qd.f32, 1], a: qd.types.NDArray[qd.f32, 2]):
    for i in range(x.shape[0]):
        a[0, i] = x[i] * 1.5
    for i in range(x.shape[0]):
        a[1, i] = x[i] * 2.0 + C
    for i in range(x.shape[0]):
        a[2, i] = x[i] * {k2}
    for i in range(x.shape[0]):
        a[3, i] = qd.sqrt(qd.abs(x[i])) - 4.0


x = np.linspace(-1.0, 1.0, 64, dtype=np.float32)
a = np.zeros((4, 64), np.float32)
k(x, a)
llvm = [c.stage("llvm") for c in qd.explain(k).constructs] if {llvm} else []
print(json.dumps([a.tobytes().hex(), [b.key for b in k.latest.built],
                  stmt_memo.stats, construct_memo.stats, llvm]))
"""
OFF = {"QDLAB_STMT_MEMO": "0", "QDLAB_CONSTRUCT_MEMO": "0"}


def want(c: float, k2: float) -> str:
    x = np.linspace(-1.0, 1.0, 64, dtype=np.float32)
    rows = [x * np.float32(1.5), x * np.float32(2) + np.float32(c), x * np.float32(k2)]
    rows.append(np.sqrt(np.abs(x)) - np.float32(4))
    return np.stack(rows).astype(np.float32).tobytes().hex()


def run(folder, c: float = 0.5, k2: float = 3.0, llvm: bool = False, **env: str) -> list:
    (folder / "main.py").write_text(MAIN.format(c=c, k2=k2, llvm=llvm))
    return run_main(folder, **env)


@pytest.mark.process
def test_a_new_process_edit_replays_the_other_loops_from_disk(tmp_path) -> None:
    first = run(tmp_path)
    assert first[0] == want(0.5, 3.0) and first[2]["loaded"] == first[3]["loaded"] == 0
    edit = run(tmp_path, k2=7.0)
    assert edit[0] == want(0.5, 7.0)
    assert edit[2]["loaded"] == 3 and edit[2]["lowered"] == 1  # the edited loop alone
    assert edit[3]["loaded"] == 3 and edit[3]["prepared"] == 1
    assert edit[2]["reads"] == edit[3]["reads"] == 2  # the kernel's bundle, the edited loop's own
    off = tmp_path / "off"
    off.mkdir()
    assert run(off, k2=7.0, **OFF)[:2] == edit[:2]  # the bits and keys of lowering everything


@pytest.mark.process
def test_a_construct_served_from_disk_gives_the_ir_of_one_prepared_anew(tmp_path) -> None:
    """Its IR and plan, made from the rows read when the report asks, emit the LLVM IR a compile
    without the memos emits."""
    run(tmp_path)
    served = run(tmp_path, k2=7.0, llvm=True)
    assert served[3]["loaded"] == 3
    off = tmp_path / "off"
    off.mkdir()
    assert run(off, k2=7.0, llvm=True, **OFF)[4] == served[4]


@pytest.mark.process
def test_a_global_changed_between_processes_is_lowered_again(tmp_path) -> None:
    run(tmp_path)
    changed = run(tmp_path, c=1.25)  # loop 1 reads C: its entry on disk no longer holds
    assert changed[0] == want(1.25, 3.0)
    assert changed[2]["lowered"] == 1 and changed[2]["replayed"] == 3
    assert changed[3]["prepared"] == 1
    edit = run(tmp_path, c=1.25, k2=7.0)  # loop 1's entry made again is the one its bundle has
    assert edit[0] == want(1.25, 7.0)
    assert edit[2]["lowered"] == 1 and edit[2]["replayed"] == 3 and edit[2]["reads"] == 2


MOVED = (
    """
import json
import numpy as np
from qdlab.compiler.cache import construct_memo, stmt_memo
{above}"""
    + textwrap.dedent(ASSERTS)
    + """
qd.init(arch=qd.cpu, debug=True)
try:
    k(np.array([1.0, 20.0], np.float32), np.zeros(2, np.float32))
    print(json.dumps(["no error"]))
except AssertionError as e:
    print(json.dumps([str(e), stmt_memo.stats, construct_memo.stats]))
"""
)


def assert_line(source: str) -> str:
    """Where the failed assert is, as its error says."""
    n = next(k for k, line in enumerate(source.splitlines(), 1) if "assert x[i]" in line)
    return f"main.py, line {n}"


@pytest.mark.process
def test_a_new_process_moved_kernel_serves_its_assert_at_its_new_line(tmp_path) -> None:
    """A construct served from disk for a kernel three lines further down names the line its
    failed assert is on now."""
    source = MOVED.format(above="", k1=1.0)
    (tmp_path / "main.py").write_text(source)
    first = run_main(tmp_path)
    assert assert_line(source) in first[0]
    moved_source = MOVED.format(above="# one\n# two\n# three\n# four", k1=2.0)
    (tmp_path / "main.py").write_text(moved_source)
    moved = run_main(tmp_path)
    assert assert_line(moved_source) != assert_line(source)
    assert assert_line(moved_source) in moved[0] and "assert x[i] < 10.0" in moved[0]
    assert moved[1]["loaded"] == 1 and moved[2]["loaded"] == 1  # the assert's loop, from disk


def test_a_bundle_serves_its_own_keys_once_and_leaves_out_what_is_not_the_compilers(
    tmp_path,
) -> None:
    """What a kernel's compile used, read back in one step by a new process (a new `Bundle` on the
    same directory): each entry for its own key, once; another kernel's bundle is not its own."""
    cache = BinaryCache(tmp_path)
    persist.Bundle("statement").keep(
        cache, ("kernel", 1), [(("s", 1), lambda: [1.5]), (("s", 2), lambda: [object()])]
    )
    persist.flush()
    again, stats = persist.Bundle("statement"), {"reads": 0}
    assert again.take(cache, ("kernel", 2), ("s", 1), stats) is None  # another kernel's
    assert again.take(cache, ("kernel", 1), ("s", 1), stats) == [1.5]
    assert again.take(cache, ("kernel", 1), ("s", 1), stats) is None  # served once, then kept
    assert again.take(cache, ("kernel", 1), ("s", 2), stats) is None  # this process's alone
    assert stats["reads"] == 2  # each bundle read once
    persist.Bundle("statement").keep(cache, ("odd", 1), [(("s", 1), lambda: 0)])
    persist.flush()
    where = keys.memo_key("statement-bundle", ("odd", 1))
    cache.put_own(where, persist.dumps([(["not", "hashable"], 1), ("three", 2, 3)]))  # type: ignore[arg-type]
    assert persist.Bundle("statement").take(cache, ("odd", 1), ("s", 1), stats) is None


@pytest.mark.process
def test_a_new_process_without_the_bundle_reads_each_entry_by_itself(tmp_path) -> None:
    run(tmp_path)
    cache = BinaryCache(tmp_path / "cache")
    bundles = [
        path
        for path in (tmp_path / "cache").rglob("*.qdo")
        if isinstance(got := persist.loads(cache.get_own(path.stem) or b""), list)
        and all(isinstance(item, tuple) and len(item) == 2 for item in got)
    ]
    assert len(bundles) == 2  # the statements' and the constructs'
    for path in bundles:
        path.unlink()
    edit = run(tmp_path, k2=7.0)
    assert edit[0] == want(0.5, 7.0) and edit[2]["loaded"] == 3 and edit[3]["loaded"] == 3
    assert edit[2]["reads"] == edit[3]["reads"] == 5  # the bundle looked for, then one by one


@pytest.mark.process
def test_damaged_entries_are_made_anew(tmp_path) -> None:
    run(tmp_path)
    for folder, _, files in os.walk(tmp_path / "cache"):
        for name in files:  # every entry's payload replaced: the cache's own check drops them
            path = Path(folder) / name
            path.write_bytes(path.read_bytes()[:-8] + b"\xff" * 8)
    again = run(tmp_path, k2=7.0)
    assert again[0] == want(0.5, 7.0) and again[2]["loaded"] == 0 and again[3]["loaded"] == 0


@pytest.mark.process
def test_statements_whose_rows_do_not_build_are_lowered_instead(tmp_path) -> None:
    """A statement read from disk is built once, where it is replayed: rows that read but do not
    build (an operand past the values they number, a setup op that is not there) leave the
    kernel's body as it was, and the statement is lowered."""
    run(tmp_path)
    cache = BinaryCache(tmp_path / "cache")
    tampered = 0
    for path in (tmp_path / "cache").rglob("*.qdo"):
        got = persist.loads(cache.get_own(path.stem) or b"")
        if not (isinstance(got, list) and got and all(len(item) == 2 for item in got)):
            continue
        items = []
        for key, data in got:
            value = persist.loads(data)
            if isinstance(value, tuple) and len(value) == 6:  # a statement's (rows, inputs, ...)
                rows, inputs = list(value[0]), value[1]
                if tampered % 2:  # a setup op that is not there
                    inputs = [10**6]
                else:  # an operand past the values the rows number
                    rows[0] = (rows[0][0], (10**6,), *rows[0][2:])
                data, tampered = persist.dumps((rows, inputs, *value[2:])), tampered + 1
            items.append((key, data))
        cache.put_own(path.stem, persist.dumps(items))  # type: ignore[arg-type]
    assert tampered == 4
    again = run(tmp_path, k2=7.0)
    assert again[0] == want(0.5, 7.0)
    assert again[2]["replayed"] == 0 and again[2]["lowered"] == 4


def test_clearing_the_cache_waits_for_the_memos_queued_writes(tmp_path) -> None:
    """`qd.clear_cache()` (and `%qdlab cache clear`) empties the disk tier after the memos' writer
    has written what the last compile queued: a write that landed after the clear left an entry
    in a cache just reported empty."""
    import qdlab as qd

    qd.init(arch=qd.cpu, offline_cache=True, offline_cache_file_path=str(tmp_path))
    store = state.cache()

    def slow() -> list:
        time.sleep(0.3)
        return [1]

    persist.save_later(store, "construct", ("queued",), slow)
    qd.clear_cache()
    persist.flush()
    assert persist.load(store, "construct", ("queued",)) is None
    assert qd.cache_stats().entries == 0


def test_a_long_chain_of_values_is_written_at_the_default_recursion_limit() -> None:
    """Rows go as deep as blocks nest, not as deep as the chain of values (IR pickled as objects
    stopped at about 200 ops)."""
    block = ir.Block()
    v = block.append(ir.Const([], f32, {"value": 1.0})).result
    for n in range(3000):
        v = block.append(ir.BinOp([v, v], f32, {"op": "add"}, None, None, f"v{n}")).result
    data = persist.dumps(persist.flatten(block.ops, []))
    assert data is not None
    back = ir.Block()
    persist.unflatten(persist.loads(data), [], back)  # type: ignore[arg-type]
    assert len(back.ops) == 3001 and back.ops[-1].operands[0] is back.ops[-2].result
    assert back.ops[-1].result.name == "v2999"
    assert back.ops[1].operands[1].users == [back.ops[1]] * 2


def test_an_entry_is_written_and_read_as_the_compilers_objects_only() -> None:
    op = ir.Const([], f32, {"value": -0.0}, None, SourceLoc("k", "f.py", 3, 4, "  x = -0.0"))
    back = persist.loads(persist.dumps([op]))  # type: ignore[arg-type]
    assert type(back[0]) is ir.Const and repr(back[0].attrs["value"]) == "-0.0"  # type: ignore[index]
    assert back[0].loc == op.loc  # type: ignore[index]
    op.attrs["value"] = np.float32(1.0)  # a value of another library: kept in this process alone
    assert persist.dumps([op]) is None
    assert persist.dumps([object()]) is None
    assert persist.loads(pickle.dumps(os.system)) is None  # names a callable: never made
    assert persist.loads(b"not a pickle") is None


def test_a_fork_waits_for_the_entry_in_hand_and_the_child_writes_its_own() -> None:
    """A child forked while the writer held the cache's lock would block on its first compile: the
    fork waits for the write in hand, and the child has a writer of its own."""
    writing = threading.Event()

    class Slow:
        def put_own(self, key: str, data: bytes) -> None:
            writing.set()
            time.sleep(0.6)

    persist.save_later(Slow(), "construct", ("slow",), lambda: [1])
    assert writing.wait(5)
    start = time.monotonic()
    pid = os.fork()
    if pid == 0:  # the child
        got: list[bytes] = []

        class Store:
            def put_own(self, key: str, data: bytes) -> None:
                got.append(data)

        persist.save_later(Store(), "construct", ("child",), lambda: [2])
        persist.flush(5)
        os._exit(0 if got else 1)
    assert time.monotonic() - start > 0.1
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
