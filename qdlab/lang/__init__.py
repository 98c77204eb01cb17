"""`quadrants.lang`: the kernel language's names under the path Quadrants code imports them from.
They are defined in `qdlab.core.language`; this package hands them out, with the submodules
Quadrants code reaches into (`impl`, `exception`, `misc`, `ops`, `util`, `matrix`,
`_template_mapper`)."""

import importlib

import qdlab.lang._template_mapper
import qdlab.lang.stream  # noqa: F401 - `qd.lang.stream`, as in Quadrants
from qdlab.core.language import *
from qdlab.core.language import Builtin, Func, RealFunc, Template  # noqa: F401
from qdlab.types.enums import Layout  # noqa: F401 - `qd.lang.Layout`, as in Quadrants

matrix = importlib.import_module("qdlab.lang.matrix")
"""`qd.lang.matrix` is this package's module (the star import above brought `qdlab.core.matrix`)."""
