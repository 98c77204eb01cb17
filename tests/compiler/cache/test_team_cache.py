"""The team cache against a real Redis server: two "machines" (processes with their own local cache
folders) share one store; entries are signed, and every fault of the store leaves kernels running
and right.

A fixture starts `redis-server` on 127.0.0.1 on a free port with its own folder; each machine is a
fresh Python process (`machine()`), so nothing is shared but the store. Skips only where
`redis-server` or the `redis` package is missing (`scripts/setup.sh` installs both)."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = pytest.mark.process

redis = pytest.importorskip(
    "redis", reason="the redis package is not installed (pip install redis)"
)
if shutil.which("redis-server") is None:
    pytest.skip(
        "redis-server is not installed (apt-get install redis-server)", allow_module_level=True
    )

SECRET = "team-secret-7c1d"
PASSWORD = "store-pw-91ab"
ROOT = Path(__file__).resolve().parents[3]

KERNEL = """
import numpy as np
import qdlab as qd

@qd.kernel
def steps(x: qd.types.NDArray[qd.f32, 1], y: qd.types.NDArray[qd.f32, 1]):
{loops}
"""

MACHINE = """
import json, logging, sys, threading
sys.path.insert(0, {folder!r})
import numpy as np
import qdlab as qd
from qdlab.compiler.cache import persist
from qdlab.compiler.codegen import targets

builds = []
build, quick = targets.CpuTarget.build, targets.CpuTarget.build_quick


def counted(self, texts, count, *a):
    if not threading.current_thread().name.startswith("qdlab-optimise"):  # tiers.py's: no edit
        builds.append(count)
    return build(self, texts, count, *a)


targets.CpuTarget.build = counted
targets.CpuTarget.build_quick = lambda self, texts, count, *a: (
    lambda out: out is not None and builds.append(count) or out)(quick(self, texts, count, *a))
warnings = []
logging.getLogger("qdlab").addHandler(type("H", (logging.Handler,), {{
    "emit": lambda self, r: warnings.append(r.getMessage())}})())
qd.init(arch=qd.cpu)
import {module} as m
out = {{}}
for run in range({runs}):
    x = np.linspace(-1, 1, 64, dtype=np.float32)
    y = np.zeros(64, np.float32)
    m.steps(x, y)
    out.setdefault("results", []).append(float(y.sum()))
persist.flush()  # the manifest and memos go out after the compile: count their writes too
r = qd.cache_stats().remote
obs = m.steps._primal.per_offload_cache_observations
out.update(builds=sum(builds), warnings=warnings, total=obs.frontend_constructs_total,
           remote=dict(enabled=r.enabled, hits=r.hits, misses=r.misses, refused=r.refused,
                       replaced=r.replaced, errors=r.errors, store=r.store, note=r.note)
           if r else None,
           stats_text=repr(qd.cache_stats()))
if obs.frontend_constructs_total > 0:
    out["served"] = [c.served_from for c in qd.explain(m.steps).constructs]
print("RESULT" + json.dumps(out))
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    def __init__(self, folder: Path, *extra: str) -> None:
        self.port = free_port()
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        self.proc = subprocess.Popen(
            [
                "redis-server",
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--dir",
                str(folder),
                "--save",
                "",
                "--appendonly",
                "no",
                *extra,
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        password = extra[extra.index("--requirepass") + 1] if "--requirepass" in extra else None
        self.client = redis.Redis(port=self.port, password=password)
        for _ in range(200):
            try:
                self.client.ping()
                return
            except redis.ConnectionError:
                time.sleep(0.025)
        raise RuntimeError("redis-server did not start")

    def url(self, password: str | None = None) -> str:
        return (
            f"redis://:{password}@127.0.0.1:{self.port}/0"
            if password
            else f"redis://127.0.0.1:{self.port}/0"
        )

    def stop(self) -> None:
        self.proc.kill()
        self.proc.wait()


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    s = Server(tmp_path / "redis")
    yield s
    s.stop()


def write_kernel(
    folder: Path, edited: int | None = None, n: int = 5, name: str = "team_kernel"
) -> str:
    loops = []
    for k in range(n):
        c = 0.75 if k == edited else k + 1.0
        loops.append(f"    for i in range(x.shape[0]):\n        y[i] = y[i] + x[i] * {c}")
    (folder / f"{name}.py").write_text(textwrap.dedent(KERNEL).format(loops="\n".join(loops)))
    return name


def machine_env(
    tmp_path: Path,
    name: str,
    url: str,
    secret: str | None = SECRET,
    prefix: str = "qdlab",
    **extra: str,
) -> dict:
    env = {  # but the suite's compile server (tests/conftest.py)
        k: v
        for k, v in os.environ.items()
        if not k.startswith("QDLAB_") or k.startswith("QDLAB_COMPILE_SERVER")
    }
    env.update(
        QDLAB_CACHE_DIR=str(tmp_path / f"machine_{name}"),
        QDLAB_REMOTE_CACHE=url,
        QDLAB_REMOTE_CACHE_PREFIX=prefix,
        PYTHONPATH=str(ROOT),
        **extra,
    )
    if secret is not None:
        env["QDLAB_CACHE_SECRET"] = secret
    return env


def machine(
    tmp_path: Path,
    name: str,
    url: str,
    module: str,
    secret: str | None = SECRET,
    runs: int = 1,
    prefix: str = "qdlab",
    **extra: str,
) -> dict:
    """Run `module`'s kernel in a fresh process with its own cache folder; what it saw."""
    env = machine_env(tmp_path, name, url, secret, prefix, **extra)
    script = MACHINE.format(folder=str(tmp_path), module=module, runs=runs)
    proc = subprocess.run(
        [sys.executable, "-c", script],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    line = next(ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT"))
    out = json.loads(line[len("RESULT") :])
    out["stderr"] = proc.stderr
    return out


def expected(edited: int | None = None, n: int = 5) -> float:
    import numpy as np

    x = np.linspace(-1, 1, 64, dtype=np.float32)
    y = np.zeros(64, np.float32)
    for k in range(n):
        y = y + x * np.float32(0.75 if k == edited else k + 1.0)
    return float(y.sum())


def test_a_second_machine_gets_every_construct_from_the_team_cache(
    tmp_path: Path, server: Server
) -> None:
    module = write_kernel(tmp_path)
    a = machine(tmp_path, "a", server.url(), module)
    assert a["builds"] > 0 and a["total"] == 5
    b = machine(tmp_path, "b", server.url(), module)
    assert b["builds"] == 0  # no LLVM: the manifest and every object came from the store
    assert b["results"] == a["results"]
    assert b["results"][0] == pytest.approx(expected())
    assert b["remote"]["hits"] >= 1 and b["remote"]["refused"] == 0
    assert b["total"] == -1  # served by the shared manifest, as a local manifest hit is


def test_constructs_served_by_the_team_cache_say_so(tmp_path: Path, server: Server) -> None:
    module = write_kernel(tmp_path)
    machine(tmp_path, "a", server.url(), module)
    from qdlab.compiler.cache import remote

    manifests = [
        k
        for k in server.client.keys("qdlab:*")
        if remote.decode(
            SECRET.encode(), k.decode().split(":", 1)[1], server.client.get(k)
        ).startswith(b'[{"units"')  # a manifest: its variants, newest first
    ]
    assert len(manifests) == 1
    server.client.delete(
        *manifests
    )  # the objects stay: the second machine lowers, then loads them all
    b = machine(tmp_path, "b", server.url(), module)
    assert b["builds"] == 0 and b["total"] == 5
    assert b["served"] == ["team cache"] * 5


def test_an_edit_on_one_machine_is_reused_by_the_other(tmp_path: Path, server: Server) -> None:
    machine(tmp_path, "a", server.url(), write_kernel(tmp_path))
    machine(tmp_path, "b", server.url(), write_kernel(tmp_path))
    a2 = machine(tmp_path, "a", server.url(), write_kernel(tmp_path, edited=2))
    assert a2["builds"] == 1  # one construct compiled on the editing machine
    b2 = machine(tmp_path, "b", server.url(), write_kernel(tmp_path, edited=2))
    assert b2["builds"] == 0
    assert b2["results"][0] == pytest.approx(expected(edited=2))


def tamper(server: Server, how: str) -> int:
    """Rewrite every entry in the store; returns how many."""
    from qdlab.compiler.cache import remote

    keys = server.client.keys("qdlab:*")
    values = [server.client.get(k) for k in keys]
    for k, v in zip(keys, values):
        key = k.decode().split(":", 1)[1]
        payload = remote.decode(SECRET.encode(), key, v)
        if how == "other_secret":
            new = remote.encode(b"not the team's secret", key, payload)
        elif how == "unsigned":
            new = payload
        elif how == "bit_flip":
            new = bytearray(v)
            new[-1] ^= 0x01
            new = bytes(new)
        elif how == "truncated":
            new = v[: len(v) // 2]
        else:  # "moved": each entry holds the one stored under the next key
            other = values[(values.index(v) + 1) % len(values)]
            new = other
        server.client.set(k, new)
    return len(keys)


@pytest.mark.parametrize("how", ["other_secret", "unsigned", "bit_flip", "truncated", "moved"])
def test_a_planted_or_damaged_entry_is_refused_and_compiled_here(
    tmp_path: Path, server: Server, how: str
) -> None:
    module = write_kernel(tmp_path)
    machine(tmp_path, "a", server.url(), module)
    assert tamper(server, how) >= 2
    planted = store(server)
    b = machine(tmp_path, "b", server.url(), module)
    assert b["results"][0] == pytest.approx(expected())
    assert b["remote"]["refused"] >= 1
    assert b["builds"] >= 1  # compiled locally instead
    assert sum("refused an entry" in w for w in b["warnings"]) == 1  # logged once, not per entry
    c = machine(tmp_path, "c", server.url(), module)  # a third machine, its own folder
    assert c["results"][0] == pytest.approx(expected())
    if how == "other_secret":  # another secret's entries: refused, never overwritten
        assert b["remote"]["replaced"] == 0 and store(server) == planted
        assert c["remote"]["refused"] >= 1 and c["builds"] >= 1
    else:  # damaged: the machine that refused each replaced it with what it compiled
        assert b["remote"]["replaced"] == len(planted)
        assert c["builds"] == 0 and c["remote"]["refused"] == 0  # they used to stay: compiled
        # on every machine from then on


def store(server: Server) -> dict:
    return {k: server.client.get(k) for k in server.client.keys("*")}


def test_a_damaged_entry_is_replaced_only_while_it_is_the_one_refused(
    server: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The replacement is one step on the store that checks the entry is still the damaged one it
    refused: a sound entry another machine wrote meanwhile stays."""
    from qdlab.compiler.cache import remote

    monkeypatch.setenv("QDLAB_CACHE_SECRET", SECRET)
    tier = remote.RedisTier(server.url(), "atomic")
    key, name = "ab" * 32, "atomic:" + "ab" * 32
    server.client.set(name, b"junk")
    assert tier.get(key) is None and tier.stats.refused == 1
    theirs = remote.encode(SECRET.encode(), key, b"another machine's object")
    server.client.set(name, theirs)  # another machine replaced it first
    tier.put(key, b"this machine's object")
    assert server.client.get(name) == theirs and tier.stats.replaced == 0
    server.client.set(name, b"junk again")
    assert tier.get(key) is None
    tier.put(key, b"this machine's object")
    assert remote.decode(SECRET.encode(), key, server.client.get(name)) == b"this machine's object"
    assert tier.stats.replaced == 1
    tier.put(key, b"a later object")  # once replaced, written once again
    assert remote.decode(SECRET.encode(), key, server.client.get(name)) == b"this machine's object"


def test_a_machine_without_the_secret_never_overwrites(tmp_path: Path, server: Server) -> None:
    """Neither a machine with another secret (to which every entry looks planted) nor one without
    any changes an entry, damaged or sound; a machine with the team's secret then still gets the
    sound ones and replaces the damaged one."""
    module = write_kernel(tmp_path)
    machine(tmp_path, "a", server.url(), module)
    damaged = min(server.client.keys("qdlab:*"))
    server.client.set(damaged, server.client.get(damaged)[:-1])
    before = store(server)
    other = machine(tmp_path, "other", server.url(), module, secret="not the team's secret")
    assert other["remote"]["refused"] >= 1 and other["remote"]["replaced"] == 0
    none = machine(tmp_path, "none", server.url(), module, secret=None)
    assert other["results"] == none["results"] and store(server) == before
    c = machine(tmp_path, "c", server.url(), module)
    assert c["remote"]["refused"] >= 1 and c["remote"]["replaced"] == 1
    assert c["results"][0] == pytest.approx(expected())


def test_a_store_that_dies_mid_run_costs_one_warning(tmp_path: Path, server: Server) -> None:
    write_kernel(tmp_path, name="first")
    machine(tmp_path, "a", server.url(), "first")  # fills the store
    pause = str(tmp_path / "pause")
    env = machine_env(tmp_path, "c", server.url())
    script = textwrap.dedent(f"""
        import sys, time, logging, os, importlib
        sys.path.insert(0, {str(tmp_path)!r})
        import numpy as np
        import qdlab as qd
        warnings = []
        logging.getLogger("qdlab").addHandler(type("H", (logging.Handler,), {{
            "emit": lambda self, r: warnings.append(r.getMessage())}})())
        qd.init(arch=qd.cpu)
        import first
        x = np.linspace(-1, 1, 64, dtype=np.float32); y = np.zeros(64, np.float32)
        first.steps(x, y)
        open({pause!r} + ".ready", "w").close()
        while not os.path.exists({pause!r} + ".go"):
            time.sleep(0.02)
        t0 = time.perf_counter()
        sums = []
        for k in range(3):
            src = open({str(tmp_path)!r} + "/first.py").read().replace("* 1.0", f"* {{k + 10}}.0")
            open({str(tmp_path)!r} + f"/later{{k}}.py", "w").write(src)
            mod = importlib.import_module(f"later{{k}}")
            y = np.zeros(64, np.float32)
            mod.steps(x, y)
            sums.append(float(y.sum()))
        print("SECONDS", time.perf_counter() - t0)
        print("SUMS", sums)
        print("DOWN", sum("did not answer" in w for w in warnings))
    """)
    proc = subprocess.Popen(
        [sys.executable, "-c", script],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    for _ in range(1000):
        if os.path.exists(pause + ".ready"):
            break
        time.sleep(0.02)
    server.stop()
    Path(pause + ".go").touch()
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 0, stderr
    lines = dict(
        line.split(" ", 1) for line in stdout.splitlines() if line[:4] in ("SECO", "SUMS", "DOWN")
    )
    assert lines["DOWN"] == "1"  # one warning naming the store, not one per construct or kernel
    assert float(lines["SECONDS"]) < 30
    sums = json.loads(lines["SUMS"])
    import numpy as np

    x = np.linspace(-1, 1, 64, dtype=np.float32)
    for k, got in enumerate(sums):
        want = np.zeros(64, np.float32)
        for j in range(5):
            want = want + x * np.float32(k + 10.0 if j == 0 else j + 1.0)
        assert got == pytest.approx(float(want.sum()))


def test_a_wrong_password_compiles_locally_with_one_warning(tmp_path: Path) -> None:
    s = Server(tmp_path / "redis", "--requirepass", PASSWORD)
    try:
        module = write_kernel(tmp_path)
        bad = machine(tmp_path, "a", s.url("wrong-password"), module)
        assert bad["results"][0] == pytest.approx(expected())
        assert (
            bad["remote"]["errors"] >= 1
            and len([w for w in bad["warnings"] if "team cache" in w]) == 1
        )
        good = machine(tmp_path, "b", s.url(PASSWORD), module)
        assert good["builds"] > 0
        again = machine(tmp_path, "c", s.url(PASSWORD), module)
        assert again["builds"] == 0
        for out in (bad, good, again):  # neither the password nor the secret shows anywhere
            text = json.dumps(out)
            assert PASSWORD not in text and "wrong-password" not in text and SECRET not in text
    finally:
        s.stop()


def test_a_full_store_that_evicts_still_gives_right_answers(tmp_path: Path) -> None:
    s = Server(tmp_path / "redis", "--maxmemory", "1mb", "--maxmemory-policy", "allkeys-lru")
    try:
        for k in range(4):
            machine(
                tmp_path, f"w{k}", s.url(), write_kernel(tmp_path, edited=k, n=12, name=f"big{k}")
            )
        out = machine(
            tmp_path, "reader", s.url(), write_kernel(tmp_path, edited=0, n=12, name="big0")
        )
        assert out["results"][0] == pytest.approx(expected(edited=0, n=12))
        assert out["remote"]["refused"] == 0
    finally:
        s.stop()


def test_four_machines_writing_the_same_keys_at_once(tmp_path: Path, server: Server) -> None:
    module = write_kernel(tmp_path)
    procs = []
    for k in range(4):
        script = MACHINE.format(folder=str(tmp_path), module=module, runs=1)
        procs.append(
            subprocess.Popen(
                [sys.executable, "-c", script],
                env=machine_env(tmp_path, f"m{k}", server.url()),
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
        )
    for p in procs:
        stdout, stderr = p.communicate(timeout=120)
        assert p.returncode == 0, stderr
        out = json.loads(next(ln for ln in stdout.splitlines() if ln.startswith("RESULT"))[6:])
        assert out["results"][0] == pytest.approx(expected())
        assert out["remote"]["refused"] == 0
    fifth = machine(tmp_path, "fifth", server.url(), module)
    assert fifth["builds"] == 0 and fifth["remote"]["refused"] == 0


def test_without_a_secret_the_team_cache_stays_off_and_says_so(
    tmp_path: Path, server: Server
) -> None:
    out = machine(tmp_path, "a", server.url(), write_kernel(tmp_path), secret=None)
    assert out["results"][0] == pytest.approx(expected())
    assert out["remote"]["enabled"] is False and "no secret" in out["remote"]["note"]
    assert len([w for w in out["warnings"] if "team cache" in w]) == 1
    assert server.client.keys("*") == []  # nothing unsigned was written


def test_a_key_file_must_be_private(tmp_path: Path, server: Server) -> None:
    key_file = tmp_path / "team.key"
    key_file.write_text(SECRET)
    key_file.chmod(0o644)
    module = write_kernel(tmp_path)
    out = machine(
        tmp_path, "a", server.url(), module, secret=None, QDLAB_CACHE_SECRET_FILE=str(key_file)
    )
    assert out["remote"]["enabled"] is False and "0600" in out["remote"]["note"]
    key_file.chmod(0o600)
    out = machine(
        tmp_path, "b", server.url(), module, secret=None, QDLAB_CACHE_SECRET_FILE=str(key_file)
    )
    assert out["remote"]["enabled"] is True and out["builds"] > 0  # the first machine wrote nothing
    out = machine(
        tmp_path, "c", server.url(), module, secret=None, QDLAB_CACHE_SECRET_FILE=str(key_file)
    )
    assert out["builds"] == 0


def test_the_namespace_keeps_teams_apart(tmp_path: Path, server: Server) -> None:
    module = write_kernel(tmp_path)
    machine(tmp_path, "a", server.url(), module, prefix="team-one")
    other = machine(tmp_path, "b", server.url(), module, prefix="team-two")
    assert other["builds"] > 0
    assert all(k.startswith((b"team-one:", b"team-two:")) for k in server.client.keys("*"))


def test_a_slow_store_costs_a_bounded_wait(tmp_path: Path) -> None:
    """A store that stops answering (here: busy for 5 s) is given up on after the per-operation
    timeout, once, and the kernel compiles here."""
    import threading

    s = Server(tmp_path / "redis", "--enable-debug-command", "yes")
    try:
        module = write_kernel(tmp_path)
        busy = threading.Thread(
            target=lambda: redis.Redis(port=s.port, socket_timeout=30).execute_command(
                "DEBUG", "SLEEP", "5"
            )
        )
        busy.start()
        time.sleep(0.2)
        t0 = time.perf_counter()
        out = machine(tmp_path, "a", s.url(), module)
        seconds = time.perf_counter() - t0
        busy.join()
    finally:
        s.stop()
    assert out["results"][0] == pytest.approx(expected())
    assert len([w for w in out["warnings"] if "did not answer" in w]) == 1
    assert seconds < 5  # one operation timeout, then the back-off: never a wait per construct
