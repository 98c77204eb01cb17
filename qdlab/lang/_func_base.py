"""`quadrants.lang._func_base`: the frozen dataclass dispatch cache Quadrants code reaches for: the
per-variant member plans (`_frozen_dc_plans`, emptied by `qd.init` / `qd.reset`) and the function
that makes one (defined in `qdlab.host.struct_args`)."""

from qdlab.host.struct_args import frozen_members as _get_frozen_dc_unwrapped
from qdlab.host.struct_args import frozen_plan as _get_frozen_dc_plan
from qdlab.host.struct_args import frozen_plans as _frozen_dc_plans

__all__ = ["_frozen_dc_plans", "_get_frozen_dc_plan", "_get_frozen_dc_unwrapped"]
