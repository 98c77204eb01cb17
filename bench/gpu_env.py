"""The GPU machine as qdlab's CUDA path needs it: the first section of `gpu_check.sh`'s report.

Why this script exists: on a machine reached for a few minutes with no network, a missing piece
(an llvmlite without the new pass manager or the NVPTX target, no libdevice, no `libcuda.so` for
Quadrants) must be named at the top of the report rather than found in a hundred test failures.
It reports the device, driver and CUDA versions, the Python packages, llvmlite's API and targets,
PTX emitted and assembled for the device (`ptxas`), libdevice, CuPy's view of the device, and
whether Quadrants starts on CUDA; then `BLOCKER:` lines for what stops the checks that follow.

Usage: ``python bench/gpu_env.py [--out report.md] [--summary lines.txt]``
"""

# No `from __future__ import annotations`: the probe kernel's annotations must be real objects.
import importlib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _gpu import ROOT, arguments, write

sys.path.insert(0, str(ROOT))
PACKAGES = ("numpy", "llvmlite", "cupy", "numba", "torch", "pytest", "pytest_timeout")


def sh(*cmd: str, timeout: float = 20) -> str:
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)
        return (proc.stdout + proc.stderr).strip()
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"({type(e).__name__}: {e})"


def versions(lines: list[str]) -> None:
    lines.append(f"python: {sys.executable} {sys.version.split()[0]}")
    for name in PACKAGES:
        try:
            mod = importlib.import_module(name)
            lines.append(f"{name}: {getattr(mod, '__version__', 'present')} ({mod.__file__})")
        except Exception as e:  # noqa: BLE001 - reported
            lines.append(f"{name}: MISSING ({type(e).__name__}: {e})")


def llvmlite_api(lines: list[str], blockers: list[str]) -> None:
    try:
        import llvmlite.binding as llvm
    except Exception as e:  # noqa: BLE001 - reported
        blockers.append(f"llvmlite does not import: {e}")
        return
    lines.append("LLVM (llvmlite): " + ".".join(map(str, llvm.llvm_version_info)))
    for fn in ("create_pass_builder", "create_pipeline_tuning_options", "parse_bitcode"):
        if not hasattr(llvm, fn):
            blockers.append(f"llvmlite lacks llvm.{fn} (qdlab needs llvmlite >= 0.44)")
    try:
        from qdlab.compiler.codegen import nvptx_jit

        nvptx_jit.target_machine("sm_90", 3)
        lines.append("llvmlite NVPTX target: present (sm_90 target machine made)")
    except Exception as e:  # noqa: BLE001 - reported
        blockers.append(f"llvmlite has no usable NVPTX target: {type(e).__name__}: {e}")


def ptx_and_ptxas(lines: list[str], blockers: list[str], sm: str) -> None:
    """A kernel with libdevice math lowered to PTX for the device and assembled by ptxas."""
    try:
        import qdlab as qd
        from qdlab.compiler.codegen import nvptx_jit

        lines.append(f"libdevice: {nvptx_jit.libdevice_path() or 'NOT FOUND'}")

        @qd.kernel
        def probe(x: qd.types.NDArray[qd.f64, 1]):
            for i in range(x.shape[0]):
                x[i] = qd.sin(x[i]) + qd.exp(x[i])

        ptx = qd.compile_ptx(probe, sm=sm)
        version = next((ln for ln in ptx.splitlines() if ln.startswith(".version")), "?")
        lines.append(f"qdlab PTX for {sm}: {version}, {len(ptx)} characters")
    except Exception as e:  # noqa: BLE001 - reported
        blockers.append(f"qdlab cannot emit PTX: {type(e).__name__}: {str(e)[:300]}")
        return
    ptxas = nvptx_jit.ptxas() or next(
        (p for p in ("/usr/local/cuda/bin/ptxas",) if os.access(p, os.X_OK)), None
    )
    if ptxas is None:
        lines.append("ptxas: not found (the driver still compiles PTX at load)")
        return
    lines.append(f"ptxas: {ptxas}: {sh(ptxas, '--version').splitlines()[-1]}")
    with tempfile.TemporaryDirectory() as tmp:
        body = ptx.split("// qdlab: ", 1)[1].split("\n", 1)[1]
        src = Path(tmp) / "probe.ptx"
        src.write_text(body)
        out = sh(ptxas, f"-arch={sm}", str(src), "-o", str(Path(tmp) / "probe.cubin"))
        lines.append(f"ptxas -arch={sm} on that PTX: {'ok' if not out else out[:300]}")


def device(lines: list[str], blockers: list[str]) -> str:
    """CuPy's view of the device; returns its sm_XY (sm_90 when there is none)."""
    try:
        import cupy

        if not cupy.is_available():
            blockers.append("cupy.is_available() is False: no CUDA device for qdlab")
            return "sm_90"
        rt = cupy.cuda.runtime
        props = rt.getDeviceProperties(0)
        name = props["name"].decode() if isinstance(props["name"], bytes) else props["name"]
        drv, run = rt.driverGetVersion(), rt.runtimeGetVersion()
        lines.append(
            f"CuPy device 0: {name}, compute capability {props['major']}.{props['minor']}, "
            f"{props['multiProcessorCount']} SMs, {props['totalGlobalMem'] / 2**30:.0f} GiB; "
            f"driver API {drv}, runtime {run}"
        )
        return f"sm_{props['major']}{props['minor']}"
    except Exception as e:  # noqa: BLE001 - reported
        blockers.append(f"CuPy: {type(e).__name__}: {e}")
        return "sm_90"


QUADRANTS = """
import quadrants as qd
qd.init(arch=qd.cuda, offline_cache=False)
print("@@", qd.__version__, "on", qd.cfg.arch)
"""


def quadrants(lines: list[str]) -> None:
    """Whether Quadrants starts on CUDA (it falls back to the CPU, with a warning, when it cannot
    load `libcuda.so`)."""
    try:
        proc = subprocess.run(
            [sys.executable, "-c", QUADRANTS],
            check=False,
            capture_output=True,
            text=True,
            timeout=90,
        )
    except subprocess.TimeoutExpired:
        lines.append("Quadrants on CUDA: timed out after 90 s")
        return
    said = [ln[3:] for ln in proc.stdout.splitlines() if ln.startswith("@@ ")]
    if said and "cuda" in said[0].lower():
        lines.append(f"Quadrants {said[0]}")
        return
    why = [ln for ln in (proc.stdout + proc.stderr).splitlines() if ln.strip()][-3:]
    lines.append("WARNING: Quadrants does not run on CUDA here: " + " | ".join(why)[:400])


def main() -> None:
    args = arguments(__doc__).parse_args()
    lines: list[str] = []
    blockers: list[str] = []
    smi = "nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap,clocks.sm,"
    lines.append(sh(*(smi + "clocks.mem,temperature.gpu,power.draw --format=csv").split()))
    cuda_version = [ln for ln in sh("nvidia-smi").splitlines() if "CUDA Version" in ln]
    lines += [ln.strip(" |") for ln in cuda_version]
    nvcc = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
    lines.append(
        f"nvcc: {sh(nvcc, '--version').splitlines()[-1] if os.path.exists(nvcc) else 'no'}"
    )
    lines.append("libcuda.so: " + os.environ.get("QDLAB_LIBCUDA_NOTE", "as the loader finds it"))
    versions(lines)
    llvmlite_api(lines, blockers)
    sm = device(lines, blockers)
    ptx_and_ptxas(lines, blockers, sm)
    quadrants(lines)
    verdict = "qdlab CUDA prerequisites: " + ("OK" if not blockers else "BLOCKED")
    text = "\n".join(
        ["## Environment", "", "```", *lines, "```", "", f"**{verdict}**"]
        + [f"- BLOCKER: {b}" for b in blockers]
    )
    write(args, text, [f"env: {verdict}"] + [f"env: BLOCKER: {b}" for b in blockers])


if __name__ == "__main__":
    main()
