"""`quadrants.lang._dataclass_util`: how a dataclass parameter's members are named once flattened
(defined in `qdlab.host.struct_args`)."""

from qdlab.host.struct_args import flat_name as create_flat_name

__all__ = ["create_flat_name"]
