"""`quadrants.lang._fast_caching`'s public names: the `dataclasses.field` metadata key that asks
Quadrants' fastcache to key a dataclass member by its value (qdlab's caches key every
compile-time input by content already, so the key changes nothing here; programs import it), and
`pure`, which `qd.pure` is."""

from __future__ import annotations

from typing import Any

from .._test_tools.warnings_helper import warn_once

FIELD_METADATA_CACHE_VALUE = "add_value_to_cache_key"


def pure(fn: Any) -> Any:
    """`@qd.pure` (deprecated, as in Quadrants): marks the kernel under it `fastcache=True`, whose
    purity rule it then follows (`Frontend.check_pure`)."""
    warn_once(
        "Use of @qd.pure is deprecated. Please use @qd.kernel(fastcache=True). @qd.pure is "
        "intended to be removed in v4.0.0"
    )
    fn.is_pure = True
    return fn


__all__ = ["FIELD_METADATA_CACHE_VALUE", "pure"]
