"""The control-flow graph of a whole kernel as DOT text (`qd.init(dump_cfg=True)` /
`QDLAB_DUMP_CFG=1`)."""

from __future__ import annotations

from .. import ir


def cfg_dot(kernel: ir.Kernel) -> str:
    lines = [f'digraph "{kernel.name}" {{', "  node [shape=box, fontname=monospace];"]
    counter = [0]

    def node(label: str) -> str:
        counter[0] += 1
        name = f"n{counter[0]}"
        lines.append(f'  {name} [label="{label}"];')
        return name

    def block(b: ir.Block, entry: str) -> str:
        last = entry
        for op in b.ops:
            here = node(f"{op.name} (line {op.loc.lineno if op.loc else '?'})")
            lines.append(f"  {last} -> {here};")
            for k, r in enumerate(op.regions):
                end = block(r, here)
                lines.append(
                    f"  {end} -> {here} [style=dashed, "
                    f'label="{"loop" if isinstance(op, (ir.For, ir.Loop)) else "join"}{k}"];'
                )
            last = here
        return last

    block(kernel.body, node("entry"))
    lines.append("}")
    return "\n".join(lines) + "\n"
