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
one.

An answer is code this process runs, so nothing of it is kept before it is checked against what was
asked: each object comes with the digest of the text it was made from and its own, and must be an
object qdlab's loader takes (header, sections, names and relocations in bounds, `elf.check`) that
defines the functions the text defines. Every wait is bounded (`deadline`). A server that fails
any of this (no answer in time, a closed connection, a foreign or unchecked answer) is not asked
again by this process, which compiles by itself from then on, and its socket is removed, so it
leaves and the next process that compiles starts a new one. A server that refuses a text (bad IR)
is left running: the text is compiled here, where the error is raised with the user's context.

The socket lives in a directory only this user can enter (`$XDG_RUNTIME_DIR/qdlab-<uid>` or
`/tmp/qdlab-<uid>`, mode 0700, checked; `QDLAB_COMPILE_SERVER_DIR` names another): an object from
the server is code this process runs, so nobody else may answer. The server exits after
`QDLAB_COMPILE_SERVER_IDLE_S` (300) seconds without a request, or when its socket is removed or
taken by a newer server. `QDLAB_COMPILE_SERVER=0` turns it off (nothing is started or asked).
`status` says whether one runs (its pid, from the socket's peer credentials) and `stop` removes its
socket and waits for it to leave (`%qdlab server`, `%qdlab server stop`).

The wire format is a header (magic, kind, level, count) and `count` length-prefixed items each
way; an answer's items carry the seconds LLVM took, and each object item starts with the SHA-256
of the text it answers and of the object that follows.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import signal
import socket
import stat
import struct
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any

from ...core import keys
from . import elf, host

_MAGIC = b"QDS2"
_HEAD = struct.Struct("<4sBBI")
"""magic, kind (`_HELLO`, `_COMPILE`), optimisation level, item count."""
_ITEM = struct.Struct("<Id")
"""length, seconds."""
_HELLO, _COMPILE, _OK, _ERROR = 72, 67, 0, 1
DEADLINE_S = 2.0
"""How long a client waits for an answer of the server, plus `_PER_BYTE_S` per byte of the texts
it sent (0.05-0.2 s for a construct's), before it compiles by itself: the quick tier takes ~1-3 ms
a construct here, the full one ~25-35 ms."""
_PER_BYTE_S = 1e-5
_MAX_ITEM = 1 << 28
"""The longest item a client reads (a larger length is not the server's)."""
_DIGEST = 32
_CHECK_S = 1.0
"""How often an idle server looks at its socket and its idle time."""
_down = False
"""Set once the server failed this process: it compiles by itself from then on."""
_hello: tuple[str, str] | None = None
_DEFINED = re.compile(r'^define (?!(?:internal|private) )[^@\n]*@"?([^"(]+)"?\(', re.MULTILINE)
"""The name of each function an LLVM IR text defines for others to call."""


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


def _exact(sock: socket.socket, n: int, deadline: float) -> bytes:
    """`n` bytes, all of them by `deadline` (a time of `time.monotonic`), else TimeoutError."""
    buf = bytearray(n)
    view, got = memoryview(buf), 0
    while got < n:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("no answer in time")
        sock.settimeout(left)
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


def _receive(
    sock: socket.socket, deadline: float, most: int = 1 << 16
) -> tuple[int, int, list[tuple[bytes, float]]]:
    """A request or an answer of at most `most` items, each at most `_MAX_ITEM` bytes."""
    magic, kind, level, count = _HEAD.unpack(_exact(sock, _HEAD.size, deadline))
    if magic != _MAGIC or count > most:
        raise ConnectionError("not a qdlab compile server's message")
    items = []
    for _ in range(count):
        n, seconds = _ITEM.unpack(_exact(sock, _ITEM.size, deadline))
        if n > _MAX_ITEM:
            raise ConnectionError("an item longer than any object")
        items.append((_exact(sock, n, deadline), seconds))
    return kind, level, items


def _digest(data: bytes) -> bytes:
    return hashlib.sha256(data).digest()


def _answer(text: bytes, obj: bytes) -> bytes:
    """An object item: the digests of the text it answers and of itself, then the object."""
    return _digest(text) + _digest(obj) + obj


def _checked(text: bytes, item: bytes) -> bytes:
    """The object of an answer's item, if it answers `text`, is whole, and is an object this
    process's loader takes that defines what `text` defines; else `elf.Malformed` (or
    `elf.Refused`)."""
    echo, digest, obj = item[:_DIGEST], item[_DIGEST : 2 * _DIGEST], item[2 * _DIGEST :]
    if echo != _digest(text):
        raise elf.Malformed("the answer of another text")
    if digest != _digest(obj):
        raise elf.Malformed("an object cut short or changed on the way")
    elf.check(obj, _DEFINED.findall(text.decode()))
    return obj


# -- the client ----------------------------------------------------------------------------------


def usable() -> bool:
    """Whether this process asks the server: its objects are ones qdlab's loader checks (Linux
    x86-64), llvmlite's binding is not loaded here (once it is, a compile here costs less than the
    round trip) and the server has not failed it."""
    return not _down and "llvmlite.binding" not in sys.modules and enabled() and elf.supported()


def listening() -> bool:
    """Whether a server's socket is there for this process to ask (not connected to yet)."""
    path = address() if usable() else None
    return path is not None and os.path.exists(path)


def deadline(texts: list[bytes]) -> float:
    """How long a client waits for the server's answer to these texts."""
    return DEADLINE_S + _PER_BYTE_S * sum(map(len, texts))


def _ask(kind: int, level: int, texts: list[bytes], count: int, check: Callable) -> Any:
    """`check` of the server's answer (`count` items) to one request, within `deadline`; None
    when there is none or it fails `check`: nothing more is asked of it by this process, and a
    server that failed it (as opposed to one that refused a text) is told to leave (`_give_up`)."""
    global _down
    path = address()
    if path is None:
        _down = True  # no server
        return None
    try:
        ino = os.stat(path).st_ino
    except (OSError, TypeError):
        _down = True  # no server
        return None
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            wait = deadline(texts)
            until = time.monotonic() + wait
            sock.settimeout(wait)
            sock.connect(path)
            _send(sock, kind, level, [(t, 0.0) for t in texts])
            status, _, got = _receive(sock, until, count)
        if status == _ERROR:
            _down = True  # bad IR: compiled here, where the error is raised with its context
            return None
        if status != _OK or len(got) != count:
            raise ConnectionError("an answer of another shape")
        return check(got)
    except (OSError, struct.error, elf.Malformed, elf.Refused, UnicodeDecodeError):
        _give_up(path, ino)
        return None


def _give_up(path: str, ino: int) -> None:
    """This process asks the server no more; its socket is removed if it is still the one asked
    (the server leaves within a second; a newer server's socket is left alone)."""
    global _down
    _down = True
    try:
        if os.stat(path).st_ino == ino:
            os.unlink(path)
    except OSError:
        pass


def hello() -> tuple[str, str] | None:
    """The server's (triple, data layout), asked once per process; None without a server."""
    global _hello

    def check(got: list) -> tuple[str, str]:
        if got[0][0] != tag().encode():
            raise ConnectionError("another compiler's server")
        return got[1][0].decode(), got[2][0].decode()

    if _hello is None and usable():
        _hello = _ask(_HELLO, 0, [tag().encode()], 3, check)
    return _hello if usable() else None


def compile_texts(texts: list[str], level: int) -> list[tuple[bytes, float]] | None:
    """Per text, its object and LLVM's seconds from the server, each checked against its text
    (`_checked`) before it is kept; or None: compile here."""
    if not usable() or hello() is None:
        return None
    asked = [t.encode() for t in texts]

    def check(got: list) -> list[tuple[bytes, float]]:
        return [(_checked(t, item), seconds) for t, (item, seconds) in zip(asked, got)]

    return _ask(_COMPILE, level, asked, len(asked), check)


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


# -- status and stop (`%qdlab server`) ------------------------------------------------------------


IDLE_S = 300.0
"""How long a server waits without a request before it leaves (`QDLAB_COMPILE_SERVER_IDLE_S`)."""


def idle_s() -> float:
    return float(os.environ.get("QDLAB_COMPILE_SERVER_IDLE_S", IDLE_S))


@dataclass(frozen=True)
class Status:
    """This user's compile server for this compiler, as seen from here."""

    path: str | None
    """Its socket; None when the server is off (`QDLAB_COMPILE_SERVER=0`) or has no private
    directory."""
    pid: int | None
    """The process listening on the socket (this user's), or None when none answers."""
    idle_s: float

    def __str__(self) -> str:
        if self.path is None:
            return "compile server: off (QDLAB_COMPILE_SERVER=0, or no private socket directory)"
        if self.pid is None:
            return (
                f"compile server: not running (a process that compiles with the disk cache on "
                f"starts it as it exits; socket {self.path})"
            )
        return (
            f"compile server: running, pid {self.pid}, socket {self.path}; it leaves after "
            f"{self.idle_s:g} s without a request (QDLAB_COMPILE_SERVER_IDLE_S)"
        )


def status() -> Status:
    path = address()
    return Status(path, _listener(path) if path is not None else None, idle_s())


def _listener(path: str) -> int | None:
    """The pid of this user's process that accepts a connection on `path`, or None."""
    peercred = getattr(socket, "SO_PEERCRED", None)
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(1.0)
            sock.connect(path)
            if peercred is None:
                return -1  # it answers; its pid is not known on this platform
            pid, uid, _ = struct.unpack("3i", sock.getsockopt(socket.SOL_SOCKET, peercred, 12))
    except OSError:
        return None
    return pid if uid == os.getuid() else None


def stop(wait_s: float = 5.0) -> Status:
    """Stop the server: its socket is removed (so no process asks it again) and it leaves at its
    next look, within `_CHECK_S`; waits for that up to `wait_s`. The status before the stop."""
    was = status()
    if was.path is None or was.pid is None:
        return was
    with contextlib.suppress(OSError):
        os.unlink(was.path)
    until = time.monotonic() + wait_s
    while was.pid > 0 and time.monotonic() < until:
        try:
            os.kill(was.pid, 0)
        except OSError:
            break
        time.sleep(0.05)
    return was


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
    idle = idle_s()
    listener.settimeout(min(_CHECK_S, idle))
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
            if time.monotonic() - last > idle:
                os.unlink(path)
                return
            continue
        with conn:
            _serve(conn, hello_items, jit)
        last = time.monotonic()


def _serve(conn: socket.socket, hello_items: list, jit: object) -> None:
    try:
        kind, level, items = _receive(conn, time.monotonic() + DEADLINE_S)
        if kind == _HELLO:
            _send(conn, _OK, 0, hello_items)
            return
        if level != 0 and os.fork() != 0:
            return  # the child answers; the parent takes the next request
        try:
            out = []
            for text, _ in items:
                obj, seconds = jit.compile_text(text.decode(), level)  # type: ignore[attr-defined]
                out.append((_answer(text, obj), seconds))
            _send(conn, _OK, level, out)
        except Exception as exc:  # noqa: BLE001 - bad IR: the client compiles it, and says why
            _send(conn, _ERROR, level, [(str(exc).encode(), 0.0)])
        finally:
            if level != 0:
                os._exit(0)
    except (OSError, struct.error):
        pass  # a client that went away
