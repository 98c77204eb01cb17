"""`quadrants.lang._fast_caching`'s public name: the `dataclasses.field` metadata key that asks
Quadrants' fastcache to key a dataclass member by its value. qdlab's caches key every
compile-time input by content already, so the key changes nothing here; programs import it."""

FIELD_METADATA_CACHE_VALUE = "add_value_to_cache_key"

__all__ = ["FIELD_METADATA_CACHE_VALUE"]
