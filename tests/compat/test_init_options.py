"""`qd.init` takes every option Quadrants' takes: those that act in qdlab act, the others are
recorded (`qd.cfg.<name>`) and listed by `%qdlab config` as having no effect; a name neither has is
a TypeError naming the closest one."""

from __future__ import annotations

import functools
import importlib.util
import json
import logging
import subprocess
import sys

import numpy as np
import pytest

import qdlab as qd
from qdlab.core.config import make_config
from qdlab.magics.views import ConfigView


@pytest.fixture(autouse=True)
def _reset() -> None:
    qd.init(arch=qd.cpu, offline_cache=False)
    yield
    qd.init(arch=qd.cpu, offline_cache=False)
    logging.getLogger("qdlab").setLevel(logging.NOTSET)


REFERENCE = """
import inspect, json, quadrants
cfg = quadrants.lang.impl.default_cfg()
options = {k: getattr(cfg, k) for k in dir(cfg) if not k.startswith("_")}
options.update(vars(quadrants.lang.misc._SpecialConfig()))
for name, p in inspect.signature(quadrants.init).parameters.items():
    if p.default is not p.empty:
        options.setdefault(name, p.default)
for name in ("arch", "default_fp", "default_ip", "default_up"):
    options.pop(name, None)
plain = (bool, int, float, str, type(None))
print(json.dumps({k: v if isinstance(v, plain) else None for k, v in options.items()}))
"""


@functools.cache
def quadrants_options() -> dict[str, object]:
    """Every option the installed Quadrants' `init` accepts, with its default (read off the wheel,
    in a process of its own: its compile config, its special config and `init`'s keywords)."""
    if importlib.util.find_spec("quadrants") is None:
        pytest.skip("quadrants is not installed")
    out = subprocess.run(
        [sys.executable, "-c", REFERENCE], capture_output=True, text=True, timeout=120, check=True
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.process
def test_every_quadrants_option_is_accepted() -> None:
    options = quadrants_options()
    assert len(options) > 60
    for name, default in options.items():
        if "path" in name or name == "offline_cache":
            continue
        qd.init(arch=qd.cpu, offline_cache=False, **{name: default})
        assert qd.cfg.arch == qd.cpu and qd.cfg.offline_cache is False
    given = {n: d for n, d in options.items() if "path" not in n and n != "offline_cache"}
    qd.init(arch=qd.cpu, offline_cache=False, **given)


def test_an_option_without_effect_is_recorded_and_shown() -> None:
    assert qd.cfg.fast_math is True and qd.cfg.ad_stack_size == 0  # Quadrants' defaults
    qd.init(arch=qd.cpu, offline_cache=False, fast_math=False, print_full_traceback=True)
    assert qd.cfg.fast_math is False and qd.cfg.print_full_traceback is True
    assert qd.lang.impl.current_cfg() is qd.cfg
    rows = {k: note for k, _, note in ConfigView(_config()).rows()}
    assert rows["fast_math"].startswith("no effect in qdlab")
    assert rows["print_full_traceback"].startswith("no effect in qdlab")
    assert rows["debug"] == "" and rows["default_ip"] == ""
    text = ConfigView(_config()).text()
    assert "fast_math" in text and "[no effect in qdlab (qdlab never uses fast-math)]" in text


def _config() -> object:
    from qdlab.host import state  # lazy: the test reads the active config itself

    return state.config()


def test_an_unknown_option_names_the_closest() -> None:
    with pytest.raises(TypeError, match="fast_mth.*did you mean `fast_math`"):
        qd.init(arch=qd.cpu, fast_mth=False)
    with pytest.raises(KeyError, match="always the unsigned type of .default_ip."):
        qd.init(arch=qd.cpu, default_up=qd.u64)


def test_an_unknown_option_is_quadrants_key_error() -> None:
    """Quadrants raises a KeyError naming them in the order given; qdlab's is also a TypeError."""
    with pytest.raises(KeyError, match="Unrecognized keyword argument.s. for qd.init: zz, foo_bar"):
        qd.init(arch=qd.cpu, zz=1, foo_bar=2)
    with pytest.raises(qd.QdInitOptionError):
        qd.init(arch=qd.cpu, foo_bar=2)


def test_log_level_sets_the_qdlab_logger() -> None:
    qd.init(arch=qd.cpu, offline_cache=False, log_level="error")
    assert logging.getLogger("qdlab").level == logging.ERROR
    qd.init(arch=qd.cpu, offline_cache=False, log_level="trace")
    assert logging.getLogger("qdlab").level == logging.DEBUG - 5  # trace, below debug
    with pytest.raises(ValueError, match="log_level"):
        qd.init(arch=qd.cpu, log_level="loud")


def test_offline_cache_max_size_of_files_is_the_cache_limit_in_bytes() -> None:
    qd.init(arch=qd.cpu, offline_cache=False, offline_cache_max_size_of_files=2**21)
    assert _config().offline_cache_max_size_mb == 2.0  # type: ignore[attr-defined]
    assert qd.cfg.offline_cache_max_size_of_files == 2**21


def test_setting_an_option_through_cfg(tmp_path: object) -> None:
    qd.lang.impl.current_cfg().debug_dump_path = str(tmp_path)
    assert qd.cfg.debug_dump_path == str(tmp_path)
    qd.cfg.fast_math = False
    assert qd.cfg.fast_math is False and qd.cfg.debug_dump_path == str(tmp_path)
    with pytest.raises(AttributeError):
        _ = qd.cfg.no_such_option


@qd.kernel
def wide(n: int) -> int:
    return n + 2**40


@qd.kernel
def halves(x: float) -> float:
    return x / 2


def test_default_ip_types_int_annotations_and_literals() -> None:
    with pytest.raises(qd.QuadrantsTypeError, match="exceeded the range of default_ip: i32"):
        wide(1)
    qd.init(arch=qd.cpu, offline_cache=False, default_ip=qd.i64)
    assert qd.lang.impl.get_runtime().default_ip == qd.i64
    assert wide(2**41) == 2**41 + 2**40
    assert qd.ndarray(int, (2,)).dtype == qd.i64 and qd.ndarray(float, (2,)).dtype == qd.f32


def test_default_fp_is_read_when_the_kernel_compiles() -> None:
    assert halves(1.0 / 3) == pytest.approx(np.float32(1 / 3) / 2)
    qd.init(arch=qd.cpu, offline_cache=False, default_fp=qd.f64)
    assert halves(1.0 / 3) == 1 / 6
    assert qd.lang.impl.get_runtime().default_fp == qd.f64


def test_set_default_ip_through_the_runtime() -> None:
    runtime = qd.lang.impl.get_runtime()
    runtime.set_default_ip(qd.i64)
    assert qd.cfg.default_ip == qd.i64 and wide(0) == 2**40
    runtime.default_ip = qd.i32
    assert make_config().default_ip == qd.i32 and qd.cfg.default_ip == qd.i32


@qd.kernel
def fill(a: qd.types.NDArray[qd.i32, 1], v: qd.i32):
    for i in range(a.shape[0]):
        a[i] = v


def test_one_compile_per_argument_signature() -> None:
    runtime = qd.lang.impl.get_runtime()
    assert runtime.get_num_compiled_functions() == 0
    fill(qd.ndarray(qd.i32, (4,)), 1)
    fill(np.zeros(6, np.int32), 2)  # a NumPy array of the same dtype and ndim: the same variant
    assert runtime.get_num_compiled_functions() == 1
    fill(np.zeros((2, 3), np.int32).reshape(6), 3)
    assert runtime.get_num_compiled_functions() == 1
    with pytest.raises(ValueError):
        fill(np.zeros(6, np.int64), 2)
    qd.init(arch=qd.cpu, offline_cache=False)
    assert runtime.get_num_compiled_functions() == 0


@qd.kernel
def reads(a: qd.types.NDArray[qd.f32, 1], i: qd.i32) -> qd.f32:
    assert i < 0, "never checked without debug"
    return a[i]


def test_check_out_of_bound_checks_indices_but_not_asserts() -> None:
    qd.init(arch=qd.cpu, offline_cache=False, check_out_of_bound=True)
    a = np.ones(4, np.float32)
    assert reads(a, 3) == 1.0  # the assert is not checked
    with pytest.raises(qd.QuadrantsAssertionError, match="index 4 is out of range"):
        reads(a, 4)


@qd.kernel
def shows(a: qd.template) -> qd.f32:  # `qd.template` without the call, as Quadrants takes it
    return a * 2.0


def test_raise_on_templated_floats() -> None:
    assert shows(123) == 246.0 and shows(1.5) == 3.0
    qd.init(arch=qd.cpu, offline_cache=False, raise_on_templated_floats=True)
    assert shows(123) == 246.0
    with pytest.raises(ValueError, match="raise_on_templated_floats"):
        shows(1.5)


SCALE = 1.5


@qd.kernel
def scaled() -> qd.f32:
    return SCALE * 2.0


def test_raise_on_templated_floats_covers_baked_in_globals() -> None:
    assert scaled() == 3.0
    qd.init(arch=qd.cpu, offline_cache=False, raise_on_templated_floats=True)
    with pytest.raises(qd.QuadrantsCompilationError, match="raise_on_templated_floats"):
        scaled()
