"""Code listings that know their source lines: LLVM IR and assembly, as the visualizer shows them.

The views ask the report for stages with line information (`llvm_lines`, `asm_lines`: `!dbg` on
each instruction, `.loc` before each run of instructions). Here that information becomes one source
line per listed row, and is then dropped from the text, so a listing reads like the plain stage.
Assembly is filtered as Compiler Explorer filters it: no directives, no comment lines, no labels
nothing jumps to; `filtered=False` keeps every line (each still mapped).
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

_DBG = re.compile(r"\s*,?\s*!dbg !(\d+)")
_DILOC = re.compile(r"^!(\d+) = (?:distinct )?!DILocation\(.*?\bline: (\d+)")
_DEBUG_META = re.compile(
    r"^!(llvm\.dbg\.cu|llvm\.module\.flags) = |^!\d+ = (distinct )?!DI|Debug Info Version|"
    r"Dwarf Version|^!\d+ = !\{\s*\}$"
)
_LOC = re.compile(r"^\s*\.loc\s+\d+\s+(\d+)")
_LABEL = re.compile(r"^([.\w$]+):")
_SYMBOL = re.compile(r"[.\w]+")
_DATA = re.compile(r"\.(byte|short|word|long|quad|octa|float|double|zero|ascii|asciz|string)\b")
_KEYED = re.compile(r"qd_[0-9a-f]{24}")


@dataclass(frozen=True)
class Row:
    """One listed line and the source line it came from (None: no source line, e.g. a label)."""

    text: str
    line: int | None


def llvm_rows(text: str) -> list[Row]:
    """LLVM IR with `!dbg` attachments as rows: each instruction keeps its line, the debug metadata
    goes."""
    lines = text.splitlines()
    where = {m.group(1): int(m.group(2)) for m in map(_DILOC.match, lines) if m}
    rows = []
    for raw in lines:
        if _DEBUG_META.search(raw):
            continue
        m = _DBG.search(raw)
        line = where.get(m.group(1)) if m else None
        rows.append(Row(_DBG.sub("", raw), line or None))
    while rows and not rows[-1].text.strip():
        rows.pop()
    return rows


def asm_rows(text: str, filtered: bool = True) -> list[Row]:
    """Assembly with `.loc` directives as rows; `filtered` drops directives, comment lines and
    labels no instruction refers to (function labels stay, and so do the constants under a label
    an instruction loads from: `.LCPI0_0: .long 0x40400000`)."""
    line: int | None = None
    rows: list[tuple[Row, str | None]] = []
    """Each row, and for a data directive the label it sits under."""
    label_now: str | None = None
    for raw in text.splitlines():
        loc = _LOC.match(raw)
        if loc:
            line = int(loc.group(1)) or None
        stripped = raw.strip()
        label = _LABEL.match(stripped)
        if label:
            label_now = label.group(1)
        if filtered:
            if not stripped or stripped.startswith(("#", ";", "//")):
                continue
            if stripped.startswith(".") and not label:
                if _DATA.match(stripped) and label_now is not None:
                    rows.append((Row(raw.split("#", 1)[0].rstrip(), None), label_now))
                continue
            raw = raw.split("#", 1)[0].rstrip() if "#" in raw and not label else raw
            if not label:
                label_now = None
        rows.append((Row(raw, None if label else line), None))
    if not filtered:
        return [r for r, _ in rows]
    used = {
        word
        for r, under in rows
        if under is None and not _LABEL.match(r.text.strip())
        for word in _SYMBOL.findall(r.text.split(None, 1)[1] if " " in r.text.strip() else "")
    }

    def keep(r: Row, under: str | None) -> bool:
        if under is not None:
            return under in used
        m = _LABEL.match(r.text.strip())
        return not m or not m.group(1).startswith(".") or m.group(1) in used

    return [r for r, under in rows if keep(r, under)]


def text_of(rows: list[Row]) -> str:
    return "\n".join(r.text for r in rows)


def diff(old: str, new: str, context: int = 2) -> str:
    """Unified diff of two listings, with the key-derived symbol names (`qd_<key>`) made equal so
    only code that changed shows."""
    a = _KEYED.sub("qd_KEY", old).splitlines()
    b = _KEYED.sub("qd_KEY", new).splitlines()
    return "\n".join(
        difflib.unified_diff(a, b, "previous compile", "this compile", lineterm="", n=context)
    )
