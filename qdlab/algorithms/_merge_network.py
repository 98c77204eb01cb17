"""`qd.algorithms.parallel_sort(keys, values=None)`: sort a 1-D field (or ndarray) of keys in
place, ascending, permuting `values` (its first `len(keys)` elements) alike.

Quadrants runs Batcher's odd-even merge sort network, one launch per stage (merge size `p`,
comparator distance `k`): comparator `(a, a + k)` (for `k == p`: `a mod 2p < p`; for `k < p`:
`a mod 2k >= k` and both ends in one `2p` block), both ends below `n`, swapping when
`keys[a] > keys[b]`. The network is not stable, and its order of equal keys (and where a NaN
ends up) is the network's own; qdlab gives the same bits:

- when no two equal keys differ (in their key or value bits) and no key is NaN, every correct
  sort gives those bits: an argsort on the host (`_order`), a gather, done;
- otherwise the same network runs as qdlab kernels: one launch sorts each aligned block of
  `2**BLOCK_BITS` elements through every stage whose comparators stay inside it (`2p <=` the
  block), in cache; then one launch a remaining stage, its runs of `k` comparators spread over
  the threads, each run a branch-free loop that vectorises (the shortest runs unrolled).

Values are permuted through an `i32` index the network carries (one compile per key dtype), then
gathered on the host, so values of any dtype or element shape work.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable

import numpy as np

from ..core.errors import QuadrantsIndexError, QuadrantsTypeError
from ..core.language import BUILTINS, func, static, template
from ..core.language import types as lang_types
from ..core.types import i32
from ..host.field import Field
from ..host.kernel import kernel
from ..host.ndarray import Ndarray

BLOCK_BITS = 16
"""log2 of the block the first launch sorts through its in-block stages: 65536 keys and indices
(512 KiB for 32-bit keys) stay in a core's L2 cache (1 MiB on this project's EPYC, where 2**14 to
2**16 sort 10**6 and 10**7 pairs ~20% faster than 2**12); the larger the block, the fewer
launches after it, each of which waits for every thread (costly on a loaded machine)."""

select = BUILTINS["select"]
minimum = BUILTINS["min"]

SHORT_LOG_K = 2
"""Stages of `k <= 2**SHORT_LOG_K` run unrolled (`_short_runs`): a loop of `k` comparators costs
more than they do."""
SHORT_RUNS = 4096
"""Runs of a short stage a thread's task takes in turn."""

DEPRECATION = (
    "qd.algorithms.parallel_sort is deprecated. Use qd.algorithms.sort (the @qd.func) instead. "
    "See docs/source/user_guide/algorithms.md for migration."
)
"""Quadrants' words, warned on every call (as a `DeprecationWarning`)."""


@func
def _exchange_when(
    keys: template(), idx: template(), a: i32, b: i32, live: i32, has_idx: template()
):
    """Comparator `(a, b)`, `a < b`, where `live` is non-zero: swap when `keys[a] > keys[b]` (NaN
    never swaps), branch-free (it vectorises; in cache, a mispredicted branch costs more than the
    two stores). A constant `live` folds away."""
    ka = keys[a]
    kb = keys[b]
    swap = (ka > kb) & (live != 0)
    keys[a] = select(swap, kb, ka)
    keys[b] = select(swap, ka, kb)
    if static(has_idx):
        ia = idx[a]
        ib = idx[b]
        idx[a] = select(swap, ib, ia)
        idx[b] = select(swap, ia, ib)


@func
def _short_runs(
    keys: template(),
    idx: template(),
    lo: i32,
    n: i32,
    g0: i32,
    g1: i32,
    log_p: i32,
    log_k: template(),
    has_idx: template(),
):
    """Runs `g0 <= g < g1` of stage `(2**log_p, 2**log_k)` over `[lo, lo + n)` for a small `k`
    known at compile time: its comparators unrolled, masked (the run's `2p` block, `b < n`) rather
    than branched on, so the loop over runs vectorises."""
    k = static(1 << log_k)
    first = log_p == log_k
    offset = 0 if first else k
    block_mask = (1 << (log_p - log_k)) - 1  # run g's right half starts a 2p block: g+1 = 0 mod
    for g in range(g0, g1):
        base = (g << (log_k + 1)) + offset
        live = i32(first) | i32(((g + 1) & block_mask) != 0)
        for i in static(range(k)):
            b = base + i + k
            ok = live & i32(b < n)
            _exchange_when(keys, idx, lo + base + i, lo + minimum(b, n - 1), ok, has_idx)


@kernel
def _sort_blocks(
    keys: lang_types.ndarray(),
    idx: lang_types.ndarray(),
    n: i32,
    block_bits: i32,
    has_idx: template(),
):
    """Every stage with `2p <= 2**block_bits`, block by block (its comparators never leave an
    aligned block of `2p`, nor, then, of `2**block_bits`; a tail block too, as a merge's stages
    reach into it)."""
    for block in range((n + (1 << block_bits) - 1) >> block_bits):
        lo = block << block_bits
        size = minimum(1 << block_bits, n - lo)
        log_p = 0
        while (1 << log_p) < n and log_p < block_bits:
            log_k = log_p
            while log_k >= 0:
                runs = (size + (2 << log_k) - 1) >> (log_k + 1)
                if log_k == 0:
                    _short_runs(keys, idx, lo, size, 0, runs, log_p, 0, has_idx)
                elif log_k == 1:
                    _short_runs(keys, idx, lo, size, 0, runs, log_p, 1, has_idx)
                elif log_k == 2:
                    _short_runs(keys, idx, lo, size, 0, runs, log_p, 2, has_idx)
                else:
                    for g in range(runs):
                        _run(keys, idx, lo, size, g, log_p, log_k, has_idx)
                log_k -= 1
            log_p += 1


@func
def _run(
    keys: template(),
    idx: template(),
    lo: i32,
    n: i32,
    g: i32,
    log_p: i32,
    log_k: i32,
    has_idx: template(),
):
    """Run `g` of stage `(2**log_p, 2**log_k)` over `[lo, lo + n)`: comparators `(a, a + k)` for
    `a` in `[base, base + k)`, `base = 2gk` (`+ k` below the stage's first, `k < p`): both ends
    each in one aligned `2k` block, so in one `2p` block or not, for the whole run; `a + k < n`.
    A contiguous branch-free loop (it vectorises)."""
    k = 1 << log_k
    base = g << (log_k + 1)
    if log_k != log_p:
        base += k
    if log_k == log_p or ((base + k) >> (log_p + 1)) == (base >> (log_p + 1)):
        for i in range(minimum(k, n - base - k)):
            _exchange_when(keys, idx, lo + base + i, lo + base + i + k, 1, has_idx)


@kernel
def _stage(
    keys: lang_types.ndarray(),
    idx: lang_types.ndarray(),
    n: i32,
    log_p: i32,
    log_k: i32,
    has_idx: template(),
):
    """One stage `(p, k) = (2**log_p, 2**log_k)`, its runs spread over the threads."""
    for g in range((n + (2 << log_k) - 1) >> (log_k + 1)):
        _run(keys, idx, 0, n, g, log_p, log_k, has_idx)


@kernel
def _short_stage(
    keys: lang_types.ndarray(),
    idx: lang_types.ndarray(),
    n: i32,
    log_p: i32,
    log_k: template(),
    has_idx: template(),
):
    """One stage of a small `k` (`_short_runs`), `SHORT_RUNS` runs a thread's task."""
    runs = (n + (2 << log_k) - 1) >> (log_k + 1)
    for c in range((runs + SHORT_RUNS - 1) // SHORT_RUNS):
        g0 = c * SHORT_RUNS
        _short_runs(keys, idx, 0, n, g0, minimum(g0 + SHORT_RUNS, runs), log_p, log_k, has_idx)


def network(keys: np.ndarray, idx: np.ndarray | None) -> None:
    """Run the odd-even merge sort network on `keys` (and `idx` alike) in place."""
    n = int(keys.shape[0])
    if n < 2:
        return
    has_idx = idx is not None
    carried = idx if idx is not None else keys  # an unused argument when there is no index
    block_bits = min(BLOCK_BITS, (n - 1).bit_length())
    _sort_blocks(keys, carried, n, block_bits, has_idx)
    log_p = block_bits
    while (1 << log_p) < n:
        for log_k in range(log_p, -1, -1):
            if log_k <= SHORT_LOG_K:
                _short_stage(keys, carried, n, log_p, log_k, has_idx)
            else:
                _stage(keys, carried, n, log_p, log_k, has_idx)
        log_p += 1


def _order(keys: np.ndarray) -> np.ndarray:
    """An argsort of `keys`. Keys of up to 32 bits, mapped to unsigned ones of the same order (a
    float's sign flips the rest), go above their index in 64-bit words: NumPy's SIMD sort of those
    is several times faster than its argsort."""
    width = keys.dtype.itemsize * 8
    if width > 32 or keys.dtype.kind not in "iuf":
        return np.argsort(keys)
    if keys.dtype.kind == "u":
        mapped = keys.astype(np.uint64)
    elif keys.dtype.kind == "i":
        mapped = (keys.astype(np.int64) + (1 << (width - 1))).astype(np.uint64)
    else:
        bits = keys.view(f"u{width // 8}").astype(np.uint64)
        sign = np.uint64(1 << (width - 1))
        mapped = bits ^ np.where(bits & sign, np.uint64((1 << width) - 1), sign)
    words = (mapped << np.uint64(32)) | np.arange(keys.shape[0], dtype=np.uint64)
    words.sort()
    return (words & np.uint64(0xFFFFFFFF)).astype(np.intp)


def _unambiguous(keys: np.ndarray, order: np.ndarray, values: np.ndarray | None) -> bool:
    """Whether every correct sort of `keys` (with `values`) gives the same bits: no NaN key, and
    within each run of equal sorted keys, equal key bits and value bits."""
    if keys.dtype.kind == "f" and bool(np.isnan(keys).any()):
        return False
    sorted_keys = keys[order]
    tie = sorted_keys[1:] == sorted_keys[:-1]
    if not tie.any():
        return True
    at = np.flatnonzero(tie)
    bits = sorted_keys.view(f"u{sorted_keys.dtype.itemsize}")
    if (bits[at] != bits[at + 1]).any():
        return False
    if values is None:
        return True
    moved = values[order[at]], values[order[at + 1]]
    width = moved[0].dtype.itemsize
    flat = [m.reshape(len(at), -1).view(f"u{width}") for m in moved]
    return not bool((flat[0] != flat[1]).any())


def host_view(
    x: object, what: str, who: str = "parallel_sort"
) -> tuple[np.ndarray, Callable[[], None] | None]:
    """(a writable host view of the elements of field or ndarray `x`, a callable storing it back
    or None); `what` and `who` name the argument and the function in the error."""
    if isinstance(x, Field):
        arr = x._storage()
        if isinstance(arr, np.ndarray):
            return x._logical(arr), None
        copy = x._host()
        return copy, lambda: x._store(copy)
    if isinstance(x, Ndarray):
        arr = x.arr
        if isinstance(arr, np.ndarray) and x.layout is None:
            return arr, None
        copy = x.to_numpy()
        return copy, lambda: x.from_numpy(copy)
    raise QuadrantsTypeError(
        f"qd.algorithms.{who}: {what} must be a qd.field or qd.ndarray, not {type(x).__name__}"
    )


def parallel_sort(keys: object, values: object = None) -> None:
    """Sort the 1-D scalar field (or ndarray) `keys` ascending in place; `values` (a field or
    ndarray of at least as many elements, of any dtype) is permuted alike. Deprecated in
    Quadrants (it warns, as there); the order of equal keys is Quadrants' network's."""
    warnings.warn(DEPRECATION, DeprecationWarning, stacklevel=2)
    k, store_keys = host_view(keys, "keys")
    if getattr(keys, "element", ()):
        raise QuadrantsTypeError(
            "qd.algorithms.parallel_sort: keys must hold scalars, not vectors or matrices "
            f"(got elements of shape {tuple(getattr(keys, 'element', ()))})"
        )
    if k.ndim != 1:
        raise QuadrantsIndexError(
            f"qd.algorithms.parallel_sort: keys must be 1-D, got shape {tuple(k.shape)}"
        )
    n = int(k.shape[0])
    v, store_values = (None, None) if values is None else host_view(values, "values")
    if v is not None and (v.ndim < 1 or v.shape[0] < n):
        raise QuadrantsIndexError(
            f"qd.algorithms.parallel_sort: values (shape {tuple(v.shape)}) must have at least "
            f"as many elements as keys ({n})"
        )
    if n < 2:
        return
    head = None if v is None else v[:n]
    if head is None and k.dtype.kind != "f":
        k.sort()  # integers: equal keys are equal bits, any sort gives the network's
    else:
        order = _order(k)
        if _unambiguous(k, order, head):
            k[...] = k[order]
            if head is not None:
                head[...] = head[order]
        else:
            index = None if head is None else np.arange(n, dtype=np.int32)
            network(k, index)
            if head is not None:
                head[...] = head[index]
    for store in (store_keys, store_values):
        if store is not None:
            store()
