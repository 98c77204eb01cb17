"""The report of one compile, as `qd.explain` and every view read it: built from what the pipeline's
stages produced, only when someone asks (a script that never looks does not pay for it)."""

from __future__ import annotations

import difflib
import functools
import os
import tempfile
from typing import TYPE_CHECKING

from ...core import keys
from ...core.config import Config
from .. import ir, split
from ..codegen.offload import offload
from ..frontend.source import Source
from ..ir.cfg import cfg_dot
from ..ir.printer import print_kernel
from ..split import gate
from .explain import ConstructReport, InterfaceSlot, KernelReport, Statement, Task
from .statements import describe_statements, statement_of_ops

if TYPE_CHECKING:
    from ..codegen.targets import Target
    from ..pipeline import Built


def make_report(
    name: str,
    source: Source,
    kernel: ir.Kernel,
    constructs: list[split.Construct],
    built: list[Built],
    fallback: gate.Fallback | None,
    alias: list,
    config: Config,
    target: Target,
    previous: KernelReport | None,
    ms: float,
    iface: split.Interface,
    slots: dict[ir.Value, tuple[int, str]],
) -> KernelReport:
    statements = describe_statements(kernel, constructs)
    group = statement_of_ops(kernel)
    tasks = [Task(t.kind, t.lines) for t in offload(kernel).tasks]
    names = [p.name for p in kernel.params]
    alias_names = [
        (names[i] + (".grad" if gi else ""), names[j] + (".grad" if gj else ""))
        for i, gi, j, gj in alias
    ]
    reports = []
    before = print_kernel(kernel, with_locs=True)
    split_ran = len(built) == len(constructs) and config.per_offload and fallback is None
    prev = {c.index: c for c in previous.constructs} if previous else {}
    for c in constructs if split_ran else []:
        b = built[c.index]
        own_ids = sorted({group[p] for p in c.positions})
        slice_ids = sorted({group[p] for p in c.slice_positions} - set(own_ids))
        own = [statements[g] for g in own_ids]
        lines = (min(s.lines[0] for s in own), max(s.lines[1] for s in own))
        slice_lines = sorted(
            {ln for g in slice_ids for ln in range(*_span(statements[g]))}
            - {ln for s in own for ln in range(*_span(s))}
        )
        r = ConstructReport(
            c.index,
            c.kind,
            lines,
            own_ids,
            slice_ids,
            slice_lines,
            [Task(t.kind, t.lines) for t in b.plan.tasks],
            b.key,
            b.status,
            b.ms,
            "" if b.status == "compiled" else b.origin,
            stages=stages_of(b, config, target),
        )
        r.stages["ir_before_split"] = before
        if b.status == "compiled":
            r.recompile_reason, r.key_diff = _why(prev.get(c.index), b)
        reports.append(r)
    report = KernelReport(
        name,
        source.filename,
        "".join(source.lines),
        source.first_line,
        "per_offload" if split_ran else "whole_kernel",
        fallback,
        statements,
        reports,
        tasks,
        before,
        alias_names,
        ms,
        previous,
        ", ".join(f"{p.name}: {p.type}" for p in kernel.params),
    )
    if not split_ran:
        report.stages = stages_of(built[0], config, target)
        report.stages["ir_before_split"] = report.ir_before_split
    else:
        report.interface = interface_report(constructs, iface, slots)
    report.__dict__["_texts"] = {r.index: b.text for r, b in zip(reports, built)}
    return report


def stages_of(b: Built, config: Config, target: Target) -> dict:
    """A unit's views: its IR text, and the target's LLVM IR, optimised LLVM IR and assembly (or
    PTX). The same three again with a `_lines` suffix carry source lines on every instruction
    (`!dbg`, `.loc`), so the visualizer can map code back to the kernel's lines."""
    prefix = keys.prefix(b.key)
    llvm_ir = functools.cache(lambda: target.emit(b.kernel, b.plan, prefix, config.bounds_checks))
    mapped = functools.cache(
        lambda: target.emit(b.kernel, b.plan, prefix, config.bounds_checks, lines=True)
    )
    lined = {f"{k}_lines": v for k, v in target.stages(mapped, config.opt_level).items()}
    return {"ir": b.text, **target.stages(llvm_ir, config.opt_level), **lined}


def interface_report(
    constructs: list[split.Construct],
    iface: split.Interface,
    slots: dict[ir.Value, tuple[int, str]],
) -> list[InterfaceSlot]:
    out = []
    for v, code in iface.published.items():
        producers = [c.index for c in constructs if v in c.exports]
        consumers = [c.index for c in constructs if v in c.imports]
        dtype = v.element if ir.is_local(v) else v.type
        loc = v.owner.loc if isinstance(v.owner, ir.Op) else None
        out.append(
            InterfaceSlot(
                v.name or slots[v][1],
                str(dtype),
                slots[v][0],
                producers[-1] if producers else -1,
                consumers,
                code,
                loc.lineno if loc else 0,
            )
        )
    return sorted(out, key=lambda s: (s.producer, s.name))


def _span(s: Statement) -> tuple[int, int]:
    return s.lines[0], s.lines[1] + 1


def _why(prev: ConstructReport | None, b: Built) -> tuple[str, str | None]:
    if prev is None:
        return "no entry under its key (new construct)", None
    old = prev.stages.get("ir")
    if not isinstance(old, str) or old == b.text:
        return "no entry under its key (same IR; compiler settings or inputs changed)", None
    diff = "\n".join(
        difflib.unified_diff(
            old.splitlines(), b.text.splitlines(), "previous", "now", lineterm="", n=1
        )
    )
    return "no entry under its key (its IR changed)", diff


def dump(name: str, kernel: ir.Kernel, built: list[Built], config: Config) -> None:
    """`print_ir` / `QDLAB_DUMP_IR=1`: one IR file per construct; `dump_cfg`: the whole kernel's
    CFG."""
    if not (config.print_ir or config.dump_ir or config.dump_cfg):
        return
    folder = config.debug_dump_path or os.path.join(tempfile.gettempdir(), "qdlab_ir")
    os.makedirs(folder, exist_ok=True)
    for index, b in enumerate(built):
        tag = (
            f"{name}_construct{index}" if len(built) > 1 or config.per_offload else f"{name}_whole"
        )
        if config.print_ir:  # a volatile load says so in Quadrants' words, as its printer does
            text = "\n".join(
                f"{line}  // global load volatile" if " volatile_load " in line else line
                for line in b.text.splitlines()
            )
            print(f"// {tag}\n{text}")
        if config.dump_ir:
            with open(os.path.join(folder, f"{tag}.qdir"), "w") as f:
                f.write(b.text)
    if config.dump_cfg:
        with open(os.path.join(folder, f"{name}_cfg.dot"), "w") as f:
            f.write(cfg_dot(kernel))
