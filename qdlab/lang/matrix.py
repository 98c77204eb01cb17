"""`quadrants.lang.matrix`: vectors and matrices under the path Quadrants code imports them from
(defined in `qdlab.core.matrix`)."""

from qdlab.core.matrix import *
from qdlab.core.matrix import Matrix, MatrixType, Vector, VectorType, swizzle_patterns  # noqa: F401

_generate_swizzle_patterns = swizzle_patterns  # the name Quadrants' tests read
