"""`quadrants.lang._perf_dispatch`: the module behind `qd.perf_dispatch`, at the path Quadrants code
imports it from. It IS `qdlab.host.perf_dispatch` (the same module object), so that a program or
test that patches its `_FORCE_MAP` changes what the dispatchers read."""

import sys

from ..host import perf_dispatch

sys.modules[__name__] = perf_dispatch
