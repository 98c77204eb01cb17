"""The compile server (`qdlab/compiler/codegen/server.py`): a process that compiled with the disk
cache on starts it as it exits; the next process that edits a loop builds through it without
importing llvmlite's binding and gets the objects, keys and results a process compiling by itself
gets. A server that is gone, answers nonsense or refuses the IR leaves the compile here; one that
is idle or replaced leaves."""

from __future__ import annotations

import hashlib
import os
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


x = np.linspace(-1.0, 1.0, 64, dtype=np.float32)
a = np.zeros((3, 64), np.float32)
k(x, a)
built = [(b.key, hashlib.sha256(b.obj).hexdigest() if b.obj else None) for b in k.latest.built]
print(json.dumps([a.tobytes().hex(), built, "llvmlite.binding" in sys.modules]))
"""


def want(k1: float) -> str:
    x = np.linspace(-1.0, 1.0, 64, dtype=np.float32)
    rows = [x * np.float32(1.5) + np.float32(0.25), np.sqrt(np.abs(x)) * np.float32(k1)]
    rows.append(x * x - np.float32(3))
    return np.stack(rows).astype(np.float32).tobytes().hex()


def private(path: Path) -> Path:
    path.mkdir(mode=0o700, exist_ok=True)
    return path


def folder(tmp_path: Path, name: str, k1: float) -> Path:
    f = tmp_path / name
    f.mkdir(exist_ok=True)
    (f / "main.py").write_text(MAIN.format(k1=k1))
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


def test_a_new_process_edits_through_the_server_with_the_bits_of_a_compile_here(tmp_path):
    srv = private(tmp_path / "srv")
    env = {"QDLAB_COMPILE_SERVER_DIR": str(srv), "QDLAB_COMPILE_SERVER_IDLE_S": "60"}
    first = folder(tmp_path, "served", 2.0)
    _, _, loaded = run_main(first, **env)  # compiles here, starts the server at exit
    assert loaded
    sock = wait_for(lambda: socket_of(srv))
    assert sock is not None, "no server started"
    try:
        (first / "main.py").write_text(MAIN.format(k1=2.5))
        served = run_main(first, **env)
        assert served[0] == want(2.5)
        assert not served[2], "the edit imported llvmlite's binding: it did not use the server"

        alone = folder(tmp_path, "alone", 2.0)  # the same two runs without any server
        run_main(alone, QDLAB_COMPILE_SERVER="0")
        (alone / "main.py").write_text(MAIN.format(k1=2.5))
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


def test_the_server_compiles_what_this_process_compiles_and_refuses_bad_ir(fresh_client):
    from qdlab.compiler.codegen import jit

    proc, path = start(fresh_client.parent, "60")
    try:
        assert path == fresh_client
        assert server.hello() == (jit.host()[0], jit.data_layout())
        for level in (0, 3):
            got = server.compile_texts([jit.WARM_IR, jit.WARM_IR.replace("3", "7")], level)
            assert got is not None
            assert [obj for obj, _ in got] == [
                jit.compile_text(jit.WARM_IR, level)[0],
                jit.compile_text(jit.WARM_IR.replace("3", "7"), level)[0],
            ]
        assert server.compile_texts(["define i64 @f() {\n  ret i32 0\n}\n"], 0) is None
        assert server._down  # a refused text is compiled here, where its error is raised
    finally:
        path.unlink()
        proc.wait(timeout=30)


def test_an_idle_server_leaves_and_removes_its_socket(tmp_path):
    directory = private(tmp_path / "srv")
    proc, path = start(directory, "1")
    assert proc.wait(timeout=30) == 0
    assert not path.exists()


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
