"""Each fallback code in plain words, with the rewrite that lets the kernel be split.

One row per code of `qdlab.compiler.split.gate.RULES` and of the per-launch fallbacks; the widget's
fallback tab reads it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Advice:
    """What a fallback code means and how to avoid it."""

    meaning: str
    rewrite: str
    example: str = ""
    """A short before/after sketch of the rewrite."""


ADVICE: dict[str, Advice] = {
    "autodiff": Advice(
        "Gradient kernels are compiled whole: the backward pass runs the constructs in reverse and "
        "links them together, so they cannot be compiled and cached one by one.",
        "Nothing to change; only the primal (forward) kernel is split.",
    ),
    "carried_value": Advice(
        "A local variable is built up inside a loop of one construct and read by a later "
        "construct. A construct compiled on its own only sees the kernel's arguments, so it cannot "
        "know the value the loop produced.",
        "Keep the value in memory instead of a local: accumulate into a one-element array "
        "argument, and read that array in the later loop.",
        "total = 0.0                      acc[0] = 0.0\n"
        "for i in range(n):               for i in range(n):\n"
        "    total += x[i]          ->        acc[0] += x[i]\n"
        "for i in range(n):               for i in range(n):\n"
        "    out[i] = total                   out[i] = acc[0]",
    ),
    "overwritten_reread": Advice(
        "A value read from an array before a loop would be re-read inside a later construct, but a "
        "construct in between writes that array, so the re-read would see the new contents instead "
        "of the snapshot.",
        "Take the snapshot into a separate array argument (or read it from an array nobody "
        "writes), or move the read after the overwrite if the new value is what you want.",
        "first = a[0]                     snap[0] = a[0]\n"
        "for i in range(n): a[i] = 0.0 -> for i in range(n): a[i] = 0.0\n"
        "for i in range(n):               for i in range(n):\n"
        "    out[i] = first                   out[i] = snap[0]",
    ),
    "gradient_alias": Advice(
        "The slice reads one argument's gradient buffer while a construct in between writes "
        "another argument's gradient buffer. Gradient buffers cannot be checked for overlap at "
        "launch, so recomputing the read is not known to be safe.",
        "Copy the gradient value into a plain (non-gradient) array first, or read it inside the "
        "loop that uses it after the write.",
    ),
    "repeated_effect": Advice(
        "A statement with a side effect (an atomic, a store, a print), a random draw or a volatile "
        "load would be recomputed into more than one construct, so it would run more than once and "
        "the kernel would do something different (the counter moves twice, two loops see different "
        "random numbers).",
        "Run the effect once and keep its result in memory: store the draw or the atomic's old "
        "value into an array, and read that array in the loops. Or draw inside each loop if "
        "independent values are fine.",
        "r = qd.random()                  buf[0] = qd.random()\n"
        "for i in range(n): x[i] = r  ->  for i in range(n): x[i] = buf[0]\n"
        "for i in range(n): y[i] = r      for i in range(n): y[i] = buf[0]",
    ),
    "mesh": Advice(
        "The kernel iterates an unstructured mesh, whose relations need the whole kernel.",
        "Not part of qdlab's language; nothing to change.",
    ),
    "concurrent_region": Advice(
        "The loops sit in a region scheduled to run concurrently (`qd.stream_parallel()`, or a "
        "`qd.graph.parallel()` section of a `qd.graph.parallel_context()` region), whose tasks "
        "share one temporary buffer, so they cannot become independent constructs.",
        "Remove the `with qd.stream_parallel():` / `with qd.graph.parallel_context():` block (the "
        "loops then run one after another, each split and cached on its own), or move the loops "
        "that need splitting out of it.",
    ),
    "diagnostic_mode": Advice(
        "A diagnostic that needs the whole kernel is on: line coverage or a control-flow-graph "
        "dump.",
        "Turn it off (`qd.init(dump_cfg=False, kernel_coverage=False)`) when you do not need it; "
        "IR dumps and `print_ir` do not force the whole-kernel path.",
    ),
    "aliased_arguments": Advice(
        "Two array arguments passed to this call share memory, and the split relied on them being "
        "distinct, so this call ran the whole-kernel variant.",
        "Pass distinct arrays (copy one of them), or accept the whole-kernel run for calls like "
        "this.",
    ),
    "unverifiable_buffer": Advice(
        "The memory extent of an argument could not be read, so the launch could not check that "
        "arrays do not overlap and ran the whole-kernel variant.",
        "Pass a `qd.ndarray`, a NumPy or CuPy array, or an object with `__array_interface__`, "
        "`__cuda_array_interface__` or DLPack.",
    ),
}


def advice(code: str) -> Advice:
    return ADVICE.get(code, Advice(f"Fallback `{code}`.", "See the message above."))
