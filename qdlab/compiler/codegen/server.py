"""A compile server: one process per user and compiler version that keeps llvmlite's binding
loaded, so a new process compiles LLVM IR text without importing it.

A new process that edits one loop of a cached kernel builds one construct, and importing llvmlite's
binding is most of that (~16 ms of its Python module bodies on this project's 2-core machine, then
~2 ms of LLVM's first-compile set-up) against ~1 ms for the compile itself. A process that had to
import the binding to compile, with the disk cache on, starts this server as it exits; later
processes send it their texts over a Unix socket and get the same objects back (the server runs
`jit.compile_text` of the same llvmlite release on the same CPU; the socket's name holds a digest
of the compiler's version and the host's key parts, which the server checks). The quick tier is
compiled inline; an optimising job runs in a forked child, so a quick compile never queues behind
one. A client that cannot reach the server, or gets a short or malformed answer, compiles in its
own process instead, for the rest of its life.

The socket lives in a directory only this user can enter (`$XDG_RUNTIME_DIR/qdlab-<uid>` or
`/tmp/qdlab-<uid>`, mode 0700, checked; `QDLAB_COMPILE_SERVER_DIR` names another): an object from
the server is code this process runs, so nobody else may answer. The server exits after
`QDLAB_COMPILE_SERVER_IDLE_S` (600) seconds without a request, or when its socket is removed or
taken by a newer server. `QDLAB_COMPILE_SERVER=0` turns it off (nothing is started or asked).

The wire format is a header (magic, kind, level, count) and `count` length-prefixed items each
way; an answer's items carry the seconds LLVM took.
"""

from __future__ import annotations

import hashlib
import os
import signal
import socket
import stat
import struct
import sys
import time
from functools import cache

from .. import keys
from . import host

_MAGIC = b"QDS1"
_HEAD = struct.Struct("<4sBBI")
"""magic, kind (`_HELLO`, `_COMPILE`), optimisation level, item count."""
_ITEM = struct.Struct("<Id")
"""length, seconds."""
_HELLO, _COMPILE, _OK, _ERROR = 72, 67, 0, 1
QUICK_TIMEOUT_S = 10.0
"""The longest a client waits for a quick object before compiling it itself."""
TIMEOUT_S = 120.0
"""... and for an optimised one (`tiers.WAIT_S`)."""
_CHECK_S = 1.0
"""How often an idle server looks at its socket and its idle time."""
_down = False
"""Set once the server failed this process: it compiles by itself from then on."""
_hello: tuple[str, str] | None = None


def enabled() -> bool:
    return os.environ.get("QDLAB_COMPILE_SERVER", "1") != "0"


def _directory() -> str | None:
    """This user's private directory for the socket, made if needed; None when it is not private
    (another owner, or open to others)."""
    base = os.environ.get("QDLAB_COMPILE_SERVER_DIR")
    if base is None:
        runtime = os.environ.get("XDG_RUNTIME_DIR") or "/tmp"
        base = os.path.join(runtime if os.path.isdir(runtime) else "/tmp", f"qdlab-{os.getuid()}")
    try:
        os.makedirs(base, mode=0o700, exist_ok=True)
        st = os.lstat(base)
    except OSError:
        return None
    private = stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid() and not st.st_mode & 0o077
    return base if private else None


@cache
def tag() -> str:
    """What a server must share with its clients: the compiler's version, the host's key parts
    (the llvmlite release and the CPU) and the interpreter."""
    parts = (keys.compiler_version(), *host.parts(), sys.executable)
    return hashlib.sha256(repr(parts).encode()).hexdigest()[:20]


def address() -> str | None:
    directory = _directory() if enabled() and hasattr(socket, "AF_UNIX") else None
    return None if directory is None else os.path.join(directory, f"llvm-{tag()}.sock")


def _exact(sock: socket.socket, n: int) -> bytes:
    buf = bytearray(n)
    view, got = memoryview(buf), 0
    while got < n:
        k = sock.recv_into(view[got:])
        if k == 0:
            raise ConnectionError("the other side closed the connection")
        got += k
    return bytes(buf)


def _send(sock: socket.socket, kind: int, level: int, items: list[tuple[bytes, float]]) -> None:
    parts = [_HEAD.pack(_MAGIC, kind, level, len(items))]
    for data, seconds in items:
        parts += [_ITEM.pack(len(data), seconds), data]
    sock.sendall(b"".join(parts))


def _receive(sock: socket.socket) -> tuple[int, int, list[tuple[bytes, float]]]:
    magic, kind, level, count = _HEAD.unpack(_exact(sock, _HEAD.size))
    if magic != _MAGIC:
        raise ConnectionError("not a qdlab compile server")
    items = []
    for _ in range(count):
        n, seconds = _ITEM.unpack(_exact(sock, _ITEM.size))
        items.append((_exact(sock, n), seconds))
    return kind, level, items


# -- the client ----------------------------------------------------------------------------------


def usable() -> bool:
    """Whether this process asks the server: llvmlite's binding is not loaded here (once it is, a
    compile here costs less than the round trip) and the server has not failed it."""
    return not _down and "llvmlite.binding" not in sys.modules and enabled()


def listening() -> bool:
    """Whether a server's socket is there for this process to ask (not connected to yet)."""
    path = address() if usable() else None
    return path is not None and os.path.exists(path)


def _ask(kind: int, level: int, items: list[tuple[bytes, float]], timeout: float) -> list | None:
    """The server's answer to one request, or None (and no more asking) when there is none."""
    global _down
    path = address()
    if path is None or not os.path.exists(path):
        _down = True
        return None
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(timeout)
            sock.connect(path)
            _send(sock, kind, level, items)
            status, _, got = _receive(sock)
    except (OSError, struct.error):
        _down = True
        return None
    if status != _OK:
        _down = True  # an error (the same compile here raises it with the user's context)
        return None
    return got


def hello() -> tuple[str, str] | None:
    """The server's (triple, data layout), asked once per process; None without a server."""
    global _hello
    if _hello is None and usable():
        got = _ask(_HELLO, 0, [(tag().encode(), 0.0)], QUICK_TIMEOUT_S)
        if got is not None and len(got) == 3 and got[0][0] == tag().encode():
            _hello = (got[1][0].decode(), got[2][0].decode())
    return _hello if usable() else None


def compile_texts(texts: list[str], level: int) -> list[tuple[bytes, float]] | None:
    """Per text, its object and LLVM's seconds from the server, or None: compile here."""
    if not usable() or hello() is None:
        return None
    timeout = QUICK_TIMEOUT_S if level == 0 else TIMEOUT_S
    got = _ask(_COMPILE, level, [(t.encode(), 0.0) for t in texts], timeout)
    if got is None or len(got) != len(texts) or not all(o.startswith(b"\x7fELF") for o, _ in got):
        return None
    return got


_start_at_exit = False


def start_at_exit() -> None:
    """Start a server as this process exits, unless one answers by then: called by a compile that
    imported llvmlite's binding with the disk cache on (the next process will want it)."""
    global _start_at_exit
    if _start_at_exit or not enabled():
        return
    _start_at_exit = True
    import atexit  # lazy: only a process that compiled registers

    atexit.register(_start)


def _start() -> None:
    path = address()
    if path is None or _answers(path):
        return
    import subprocess  # lazy: at exit, once

    root = os.path.dirname(os.path.abspath(__file__))
    for _ in range(3):  # qdlab/compiler/codegen -> the folder that holds qdlab
        root = os.path.dirname(root)
    paths = [root, *filter(None, [os.environ.get("PYTHONPATH")])]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(paths))
    code = "from qdlab.compiler.codegen import server; server.main()"
    try:
        subprocess.Popen(
            [sys.executable, "-c", code, path, tag()],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            cwd="/",
            env=env,
            start_new_session=True,  # not the terminal's: a ^C to the program leaves it be
        )
    except OSError:
        pass


def _answers(path: str) -> bool:
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(1.0)
            sock.connect(path)
        return True
    except OSError:
        return False


# -- the server ----------------------------------------------------------------------------------


def main() -> None:
    """`python -c '...server.main()' PATH TAG`: serve at PATH until idle, if TAG is this
    compiler's."""
    path, want = sys.argv[1], sys.argv[2]
    if want != tag() or os.path.dirname(path) != _directory():
        return
    from . import jit  # lazy: llvmlite's binding, in the server only

    for level in (0, 3):  # LLVM's first-compile set-up, paid before the first client
        jit.compile_text(jit.WARM_IR, level)
    hello_items = [(tag().encode(), 0.0), (jit.host()[0].encode(), 0.0)]
    hello_items.append((jit.data_layout().encode(), 0.0))
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    fresh = f"{path}.{os.getpid()}"
    listener.bind(fresh)
    listener.listen(64)
    os.replace(fresh, path)  # clients see a ready server or none
    ours = os.stat(path).st_ino
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # optimising children reap themselves
    idle_s = float(os.environ.get("QDLAB_COMPILE_SERVER_IDLE_S", "600"))
    listener.settimeout(min(_CHECK_S, idle_s))
    last = time.monotonic()
    while True:
        try:
            conn, _ = listener.accept()
        except TimeoutError:
            try:
                gone = os.stat(path).st_ino != ours
            except OSError:
                gone = True
            if gone:
                return
            if time.monotonic() - last > idle_s:
                os.unlink(path)
                return
            continue
        with conn:
            _serve(conn, hello_items, jit)
        last = time.monotonic()


def _serve(conn: socket.socket, hello_items: list, jit: object) -> None:
    try:
        conn.settimeout(QUICK_TIMEOUT_S)
        kind, level, items = _receive(conn)
        if kind == _HELLO:
            _send(conn, _OK, 0, hello_items)
            return
        if level != 0 and os.fork() != 0:
            return  # the child answers; the parent takes the next request
        try:
            out = [jit.compile_text(text.decode(), level) for text, _ in items]  # type: ignore[attr-defined]
            _send(conn, _OK, level, out)
        except Exception as exc:  # noqa: BLE001 - bad IR: the client compiles it, and says why
            _send(conn, _ERROR, level, [(str(exc).encode(), 0.0)])
        finally:
            if level != 0:
                os._exit(0)
    except (OSError, struct.error):
        pass  # a client that went away
