"""`textwrap2.dedent(n, text)`: drop the first `n` characters of every line (`textwrap.dedent`
takes only the margin common to all lines)."""


def dedent(indent_size: int, v: str) -> str:
    return "\n".join(line[indent_size:] for line in v.split("\n"))
