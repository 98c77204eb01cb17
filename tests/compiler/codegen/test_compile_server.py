"""The compile server (`qdlab/compiler/codegen/server.py`): a process that compiled with the disk
cache on starts it as it exits; the next process that edits a loop builds through it without
importing llvmlite's binding and gets the objects, keys and results a process compiling by itself
gets. A server that is gone, answers nonsense or refuses the IR leaves the compile here; one that
is idle or replaced leaves. A server process with a fault injected (junk with the ELF magic, an
object cut short, another kernel's object, no answer to the optimising compile, dying or cutting
its answer short) costs a new process at most the client's deadline: it runs with the bits of a
compile by itself, and removes that server's socket."""

from __future__ import annotations

import hashlib
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from fresh import run_main

from qdlab.compiler.codegen import server

MAIN = """
import hashlib, json, sys
import numpy as np
import qdlab as qd

qd.init(arch=qd.cpu)


@qd.kernel
def k(x: qd.types.NDArray[qd.f32, 1], a: qd.types.NDArray[qd.f32, 2]):
    for i in range(x.shape[0]):
        a[0, i] = x[i] * 1.5 + 0.25
    for i in range(x.shape[0]):
        a[1, i] = qd.sqrt(qd.abs(x[i])) * {k1}
    for i in range(x.shape[0]):
        a[2, i] = x[i] * x[i] - 3.0


x = np.linspace(-1.0, 1.0, {n}, dtype=np.float32)
a = np.zeros((3, {n}), np.float32)
k(x, a)
built = [(b.key, hashlib.sha256(b.obj).hexdigest() if b.obj else None) for b in k.latest.built]
print(json.dumps([a.tobytes().hex(), built, "llvmlite.binding" in sys.modules]))
"""


def want(k1: float, n: int = 64) -> str:
    x = np.linspace(-1.0, 1.0, n, dtype=np.float32)
    rows = [x * np.float32(1.5) + np.float32(0.25), np.sqrt(np.abs(x)) * np.float32(k1)]
    rows.append(x * x - np.float32(3))
    return np.stack(rows).astype(np.float32).tobytes().hex()


def private(path: Path) -> Path:
    path.mkdir(mode=0o700, exist_ok=True)
    return path


def folder(tmp_path: Path, name: str, k1: float, n: int = 64) -> Path:
    f = tmp_path / name
    f.mkdir(exist_ok=True)
    (f / "main.py").write_text(MAIN.format(k1=k1, n=n))
    return f


def socket_of(directory: Path) -> Path | None:
    found = sorted(directory.glob("llvm-*.sock"))
    return found[0] if found else None


def wait_for(check, seconds: float = 60.0):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        got = check()
        if got:
            return got
        time.sleep(0.1)
    return check()


def stored(cache: Path, built: list) -> list[str]:
    """Digest of the cached (optimised) object of each built construct."""
    return [
        hashlib.sha256(next(cache.rglob(f"{key}*")).read_bytes()).hexdigest() for key, _ in built
    ]


@pytest.mark.process
def test_a_new_process_edits_through_the_server_with_the_bits_of_a_compile_here(tmp_path):
    srv = private(tmp_path / "srv")
    env = {"QDLAB_COMPILE_SERVER_DIR": str(srv), "QDLAB_COMPILE_SERVER_IDLE_S": "60"}
    first = folder(tmp_path, "served", 2.0)
    _, _, loaded = run_main(first, **env)  # compiles here, starts the server at exit
    assert loaded
    sock = wait_for(lambda: socket_of(srv))
    assert sock is not None, "no server started"
    try:
        (first / "main.py").write_text(MAIN.format(k1=2.5, n=64))
        served = run_main(first, **env)
        assert served[0] == want(2.5)
        assert not served[2], "the edit imported llvmlite's binding: it did not use the server"

        alone = folder(tmp_path, "alone", 2.0)  # the same two runs without any server
        run_main(alone, QDLAB_COMPILE_SERVER="0")
        (alone / "main.py").write_text(MAIN.format(k1=2.5, n=64))
        here = run_main(alone, QDLAB_COMPILE_SERVER="0")
        assert here[2]
        assert served[:2] == here[:2]  # results, keys, quick objects of the edited construct
        assert stored(first / "cache", served[1]) == stored(alone / "cache", here[1])  # optimised
    finally:
        sock.unlink()  # the server leaves at its next look (within a second)


@pytest.fixture
def fresh_client(monkeypatch, tmp_path):
    """This process as a client that has not asked a server yet, with its own socket
    directory."""
    monkeypatch.setenv("QDLAB_COMPILE_SERVER_DIR", str(private(tmp_path / "srv")))
    monkeypatch.setattr(server, "_down", False)
    monkeypatch.setattr(server, "_hello", None)
    monkeypatch.setattr(server, "usable", lambda: not server._down and server.enabled())
    return Path(server.address())


def test_a_socket_nobody_listens_on_leaves_the_compile_here(fresh_client):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(str(fresh_client))
    s.close()  # the file stays, as a killed server leaves it
    assert server.compile_texts(["define void @f() {\n  ret void\n}\n"], 0) is None
    assert server._down  # and is not asked again
    assert not fresh_client.exists()  # nor by the next process


def test_an_answer_that_is_not_the_servers_leaves_the_compile_here(fresh_client):
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(fresh_client))
    listener.listen(1)

    def answer() -> None:
        conn, _ = listener.accept()
        with conn:
            conn.recv(1 << 16)
            conn.sendall(b"HTTP/1.1 400 Bad Request\r\n\r\n")

    t = threading.Thread(target=answer)
    t.start()
    try:
        assert server.compile_texts(["define void @f() {\n  ret void\n}\n"], 0) is None
    finally:
        t.join()
        listener.close()


def start(directory: Path, idle_s: str) -> tuple[subprocess.Popen, Path]:
    path = directory / f"llvm-{server.tag()}.sock"
    proc = subprocess.Popen(server_command(path), env=server_env(directory, idle_s))
    assert wait_for(path.exists), "the server did not start"
    return proc, path


def server_env(directory: Path, idle_s: str) -> dict:
    return dict(
        os.environ, QDLAB_COMPILE_SERVER_DIR=str(directory), QDLAB_COMPILE_SERVER_IDLE_S=idle_s
    )


def server_command(path: Path) -> list[str]:
    code = "from qdlab.compiler.codegen import server; server.main()"
    return [sys.executable, "-c", code, str(path), server.tag()]


IR = "define i64 @qd_f{k}(i64* %p) nounwind {{\n  store i64 {k}, i64* %p\n  ret i64 0\n}}\n"
"""A text whose object qdlab's loader takes (as every kernel's is: no unwind tables)."""


@pytest.mark.process
def test_the_server_compiles_what_this_process_compiles_and_refuses_bad_ir(fresh_client):
    from qdlab.compiler.codegen import jit

    proc, path = start(fresh_client.parent, "60")
    try:
        assert path == fresh_client
        assert server.hello() == (jit.host()[0], jit.data_layout())
        for level in (0, 3):
            got = server.compile_texts([IR.format(k=3), IR.format(k=7)], level)
            assert got is not None
            assert [obj for obj, _ in got] == [
                jit.compile_text(IR.format(k=3), level)[0],
                jit.compile_text(IR.format(k=7), level)[0],
            ]
        assert server.compile_texts(["define i64 @f() {\n  ret i32 0\n}\n"], 0) is None
        assert server._down  # a refused text is compiled here, where its error is raised
        assert path.exists()  # and the server, which did nothing wrong, stays
    finally:
        path.unlink()
        proc.wait(timeout=30)


def test_the_answer_of_another_text_is_refused(fresh_client):
    """A peer that answers with another text's object, whole and an object of its own, is caught
    by the digest of the text it answers, before the object is kept."""
    from qdlab.compiler.codegen import jit

    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(fresh_client))
    listener.listen(2)
    hello = [server.tag().encode(), jit.host()[0].encode(), jit.data_layout().encode()]
    other = IR.format(k=9).encode()

    def answer() -> None:
        for items in (
            [(x, 0.0) for x in hello],
            [(server._answer(other, jit.compile_text(other.decode(), 0)[0]), 0.0)],
        ):
            conn, _ = listener.accept()
            with conn:
                server._receive(conn, time.monotonic() + 10)
                server._send(conn, 0, 0, items)

    t = threading.Thread(target=answer)
    t.start()
    try:
        assert server.compile_texts([IR.format(k=9).replace("qd_f9", "qd_f8")], 0) is None
        assert server._down and not fresh_client.exists()
    finally:
        t.join()
        listener.close()


@pytest.mark.process
def test_an_idle_server_leaves_and_removes_its_socket(tmp_path):
    directory = private(tmp_path / "srv")
    proc, path = start(directory, "1")
    assert proc.wait(timeout=30) == 0
    assert not path.exists()


@pytest.mark.process
def test_a_server_replaced_by_a_newer_one_leaves(tmp_path):
    directory = private(tmp_path / "srv")
    older, path = start(directory, "60")
    ino = path.stat().st_ino
    newer, _ = (None, None)
    try:
        newer = subprocess.Popen(server_command(path), env=server_env(directory, "60"))
        assert wait_for(lambda: path.exists() and path.stat().st_ino != ino)
        assert older.wait(timeout=30) == 0
    finally:
        path.unlink(missing_ok=True)
        if newer is not None:
            newer.wait(timeout=30)


def test_a_socket_directory_others_may_enter_is_not_used(monkeypatch, tmp_path):
    open_dir = tmp_path / "open"
    open_dir.mkdir(mode=0o755)
    open_dir.chmod(0o755)
    monkeypatch.setenv("QDLAB_COMPILE_SERVER_DIR", str(open_dir))
    assert server.address() is None
    monkeypatch.setenv("QDLAB_COMPILE_SERVER", "0")
    monkeypatch.setenv("QDLAB_COMPILE_SERVER_DIR", str(private(tmp_path / "srv")))
    assert server.address() is None


FAULTY = """
import os, sys, time
from qdlab.compiler.codegen import jit, server

path, tag, fault, log = sys.argv[1:5]
real, send = jit.compile_text, server._send


def compile_text(text, level):
    if text == jit.WARM_IR:  # the server's own warm-up
        return real(text, level)
    with open(log, "a") as f:
        f.write(f"{{level}}\\n")
    obj, seconds = real(text, level)
    if fault == "junk":
        return b"\\x7fELF" + os.urandom(len(obj) - 4), seconds
    if fault == "truncated":
        return obj[: len(obj) // 2], seconds
    if fault == "another kernel's":
        return real(text.replace("qd_", "qe_"), level)
    if fault == "silent" and level != 0:
        time.sleep(3600)  # never answers the optimising compile
    if fault == "dies":
        os._exit(1)  # the connection closes unanswered
    return obj, seconds


class Half:
    def __init__(self, sock):
        self.sock = sock

    def sendall(self, data):
        self.sock.sendall(data[: len(data) // 2])


def cut(sock, kind, level, items):
    if items and len(items[0][0]) > 64:  # an object's answer, not the hello
        sock = Half(sock)
    return send(sock, kind, level, items)


jit.compile_text = compile_text
if fault == "cut short":
    server._send = cut
sys.argv[1:] = [path, tag]
server.main()
"""
FAULTS = ["junk", "truncated", "another kernel's", "silent", "dies", "cut short"]
BIG = 1 << 16
"""Elements of the fault tests' arrays: the first call's parallel loops wait for their optimised
code (`tiers.py`), which the silent server never gives."""


@pytest.fixture(scope="module")
def alone(tmp_path_factory) -> list:
    """What a new process compiling by itself gets (results, keys, quick objects)."""
    f = folder(tmp_path_factory.mktemp("alone"), "alone", 2.0, BIG)
    return run_main(f, QDLAB_COMPILE_SERVER="0")


@pytest.mark.process
@pytest.mark.parametrize("fault", FAULTS)
def test_a_faulty_server_costs_a_bounded_wait_and_gives_the_bits_of_a_compile_here(
    tmp_path, alone, fault
):
    directory = private(tmp_path / "srv")
    path, log = directory / f"llvm-{server.tag()}.sock", tmp_path / "asked.log"
    env = server_env(directory, "60")
    code = FAULTY.format()
    proc = subprocess.Popen(
        [sys.executable, "-c", code, str(path), server.tag(), fault, str(log)],
        env=env,
        start_new_session=True,  # its forked children too are stopped at the end
    )
    try:
        assert wait_for(path.exists), "the server did not start"
        f = folder(tmp_path, "client", 2.0, BIG)
        t0 = time.monotonic()
        got = run_main(f, QDLAB_COMPILE_SERVER_DIR=str(directory))
        took = time.monotonic() - t0
        assert log.read_text(), "the server was never asked"
        assert got[0] == want(2.0, BIG) == alone[0]
        assert got[1] == alone[1]  # keys and quick objects: the bits of a compile by itself
        assert got[2]  # it compiled by itself
        assert not path.exists()  # and removed the faulty server's socket
        assert took < server.DEADLINE_S + 20, took  # 120 s before, for the silent server
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
