"""The one IR printer. Its text is canonical: the same IR prints the same way in every process.

Values are named after the kernel's own variables (`%total`, `%i`), numbered when a name repeats,
and numbered (`%0`, `%1`) when they have no name. Source locations are left out unless asked for, so
a construct's cache key, which hashes this text, does not change when the lines above it move.
"""

from __future__ import annotations

from . import Block, Function, Kernel, Op, Value, functions_of


class Printer:
    def __init__(self, with_locs: bool = False) -> None:
        self.with_locs = with_locs
        self.names: dict[Value, str] = {}
        self.taken: dict[str, int] = {}
        self.counter = 0
        self.lines: list[str] = []

    def name(self, v: Value) -> str:
        if v not in self.names:
            if v.name:
                n = self.taken.get(v.name, 0)
                self.taken[v.name] = n + 1
                self.names[v] = f"%{v.name}" if n == 0 else f"%{v.name}.{n}"
            else:
                self.names[v] = f"%{self.counter}"
                self.counter += 1
        return self.names[v]

    def attrs(self, op: Op) -> str:
        if not op.attrs:
            return ""
        items = ", ".join(f"{k}={_attr(op.attrs[k])}" for k in sorted(op.attrs))
        return f" {{{items}}}"

    def block(self, block: Block, indent: int) -> None:
        for op in block.ops:
            self.op(op, indent)

    def op(self, op: Op, indent: int) -> None:
        pad = "  " * indent
        lhs = f"{self.name(op.result)} = " if op.result is not None else ""
        operands = ", ".join(self.name(v) for v in op.operands)
        ty = f" : {op.result.type}" if op.result is not None else ""
        loc = f"  // line {op.loc.lineno}" if self.with_locs and op.loc else ""
        head = f"{pad}{lhs}{op.name}{' ' if operands else ''}{operands}{self.attrs(op)}{ty}"
        if not op.regions:
            self.lines.append(head + loc)
            return
        for k, region in enumerate(op.regions):
            args = ", ".join(f"{self.name(a)}: {a.type}" for a in region.args)
            opener = head if k == 0 else f"{pad}}} else"
            self.lines.append(
                f"{opener} {'(' + args + ') ' if args else ''}{{" + (loc if k == 0 else "")
            )
            self.block(region, indent + 1)
        self.lines.append(pad + "}")


def _attr(v: object) -> str:
    if isinstance(v, Function):
        return f"@{v.name}"
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_attr(x) for x in v) + "]"
    return repr(v)


def print_kernel(kernel: Kernel, with_locs: bool = False) -> str:
    p = Printer(with_locs)
    params = ", ".join(f"{t.name}: {t.type}" for t in kernel.params)
    rets = f" -> ({', '.join(str(r) for r in kernel.returns)})" if kernel.returns else ""
    p.lines.append(f"kernel {kernel.name}({params}){rets} {{")
    p.block(kernel.body, 1)
    p.lines.append("}")
    for fn in functions_of(kernel):  # what it calls is part of its text (and of its key)
        params = ", ".join(f"{p.name(v)}: {v.type}" for v in fn.params)
        rets = f" -> {fn.returns}" if fn.returns is not None else ""
        p.lines.append(f"func @{fn.name}({params}){rets} {{")
        p.block(fn.body, 1)
        p.lines.append("}")
    return "\n".join(p.lines) + "\n"
