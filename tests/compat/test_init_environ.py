"""What `qd.init` reads beside its arguments, as Quadrants 1.3.3 reads it (values recorded from
quadrants 1.3.3): the `QD_*` variables, `require_version`, `_test_mode`'s special config, and its
words about caching with IR dumps and IR loads."""

from __future__ import annotations

import logging
import os
import warnings

import pytest

import qdlab as qd
from qdlab.lang import misc


@pytest.fixture(autouse=True)
def _reset(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith("QD_") or name == "QUADRANTS_LOAD_PTX":
            monkeypatch.delenv(name)
    yield
    monkeypatch.undo()
    qd.init(arch=qd.cpu, offline_cache=False)
    logging.getLogger("qdlab").setLevel(logging.NOTSET)


def test_qd_variables_set_options(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, text in {
        "QD_OPT_LEVEL": "1",
        "QD_DEFAULT_FP": "64",
        "QD_RANDOM_SEED": "7",
        "QD_OFFLINE_CACHE_FILE_PATH": "/tmp/x",
        "QD_FAST_MATH": "0",
        "QD_DEBUG": "1",
        "QD_ADVANCED_OPTIMIZATION": "",  # empty: no effect
    }.items():
        monkeypatch.setenv(name, text)
    qd.init(arch=qd.cpu, offline_cache=False)
    assert (qd.cfg.opt_level, qd.cfg.default_fp, qd.cfg.random_seed) == (1, qd.f64, 7)
    assert (qd.cfg.offline_cache_file_path, qd.cfg.fast_math) == ("/tmp/x", False)
    assert qd.cfg.debug is True and qd.cfg.advanced_optimization is True


def test_an_argument_wins_over_its_variable_with_a_warning(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    monkeypatch.setenv("QD_DEBUG", "1")
    qd.init(arch=qd.cpu, offline_cache=False, debug=False)
    assert qd.cfg.debug is False
    err = capsys.readouterr().err
    assert 'Environment variable QD_DEBUG=1 overridden by qd.init argument "debug"' in err


def test_a_bad_default_type_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("QD_DEFAULT_IP", "16")
    with pytest.raises(ValueError, match=r"Invalid QD_DEFAULT_IP=16, should be 32 or 64"):
        qd.init(arch=qd.cpu)


def test_test_mode_returns_the_special_config(monkeypatch: pytest.MonkeyPatch) -> None:
    spec = qd.init(arch=qd.cpu, offline_cache=False, _test_mode=True)
    assert (spec.log_level, spec.gdb_trigger, spec.print_full_traceback) == ("info", False, False)
    monkeypatch.setenv("QD_LOG_LEVEL", "error")
    monkeypatch.setenv("QD_GDB_TRIGGER", "1")
    spec = qd.init(arch=qd.cpu, offline_cache=False, _test_mode=True)
    assert (spec.log_level, spec.gdb_trigger) == ("error", True)
    assert qd.init(arch=qd.cpu, offline_cache=False) is None


def test_an_unknown_option_is_a_key_error() -> None:
    with pytest.raises(KeyError, match="Unrecognized keyword argument.* for qd.init: foo_bar"):
        qd.init(arch=qd.cpu, foo_bar=233)


@pytest.mark.parametrize("version", ["1.3.3", "1.2", "1.3.3rc1", "1.0.9"])
def test_require_version_met(version: str) -> None:
    qd.init(arch=qd.cpu, offline_cache=False, require_version=version)


@pytest.mark.parametrize(
    ("version", "words"),
    [
        ("1.3.4", "Required version >= 1.3.4, installed version = 1.3.3"),
        ("2.0.0", "2.0.0"),
        ("abc", "PEP 440"),
        ("1", "PEP 440"),
    ],
)
def test_require_version_not_met(version: str, words: str) -> None:
    with pytest.raises(RuntimeError, match=words):
        qd.init(arch=qd.cpu, offline_cache=False, require_version=version)


def test_repo_dir_follows_the_process_environment(tmp_path: object) -> None:
    core = qd._lib.utils.import_qd_python_core()
    assert (core.get_version_major(), core.get_version_minor(), core.get_version_patch()) == (
        1,
        3,
        3,
    )
    old = os.environ.get("XDG_CACHE_HOME")
    os.putenv("XDG_CACHE_HOME", str(tmp_path))  # seen by C's getenv, not by os.environ
    try:
        assert core.get_repo_dir() == os.path.join(str(tmp_path), "quadrants", "")
    finally:
        if old is None:
            os.unsetenv("XDG_CACHE_HOME")
        else:
            os.putenv("XDG_CACHE_HOME", old)


@pytest.mark.parametrize("how", ["print_ir", "QD_DUMP_IR"])
def test_ir_dumps_with_caching_warn(how: str, monkeypatch: pytest.MonkeyPatch) -> None:
    options = {"print_ir": True} if how == "print_ir" else {}
    if how == "QD_DUMP_IR":
        monkeypatch.setenv("QD_DUMP_IR", "1")
    with pytest.warns(UserWarning, match=r"\[warning_code=DUMP_IR_CACHE_MISMATCH\]"):
        qd.init(arch=qd.cpu, offline_cache=True, **options)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        qd.init(arch=qd.cpu, offline_cache=False, **options)


def test_load_ir_with_caching_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("QD_LOAD_IR", "1")
    with pytest.raises(ValueError, match="Caching must be disabled when using QD_LOAD_IR"):
        qd.init(arch=qd.cpu, offline_cache=True)
    with pytest.raises(ValueError, match="QD_LOAD_IR"):
        qd.init(arch=qd.cpu, offline_cache=False)  # src_ll_cache is on by default
    qd.init(arch=qd.cpu, offline_cache=False, src_ll_cache=False)
    monkeypatch.setenv("QD_LOAD_IR", "0")
    qd.init(arch=qd.cpu, offline_cache=True)


class _Cfg:
    def __init__(self, arch: qd.Arch, offline_cache: bool = True) -> None:
        self.arch, self.offline_cache = arch, offline_cache


@pytest.mark.parametrize(
    ("load_ir", "load_ptx", "arch", "refused"),
    [
        ("1", None, qd.vulkan, None),
        ("1", None, qd.amdgpu, "QD_LOAD_IR"),
        ("1", None, qd.cuda, "QD_LOAD_IR"),
        (None, "1", qd.cuda, "QUADRANTS_LOAD_PTX"),
        (None, "1", qd.metal, None),
        (None, "1", qd.x64, None),
        ("1", "1", qd.cuda, "QD_LOAD_IR and QUADRANTS_LOAD_PTX"),
    ],
)
def test_which_arch_reads_which_load_variable(
    load_ir: str | None,
    load_ptx: str | None,
    arch: qd.Arch,
    refused: str | None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name, value in (("QD_LOAD_IR", load_ir), ("QUADRANTS_LOAD_PTX", load_ptx)):
        if value is not None:
            monkeypatch.setenv(name, value)
    if refused is None:
        misc._check_ir_load_envs_against_caching(_Cfg(arch), src_ll_cache=True)
    else:
        with pytest.raises(ValueError, match=refused):
            misc._check_ir_load_envs_against_caching(_Cfg(arch), src_ll_cache=True)
    misc._check_ir_load_envs_against_caching(_Cfg(arch, offline_cache=False), src_ll_cache=False)
