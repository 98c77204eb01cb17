"""`quadrants.lang.exception`: the exception classes under the module path Quadrants code imports
them from (the very classes qdlab raises)."""

from ..core.errors import (
    QuadrantsAssertionError,
    QuadrantsCompilationError,
    QuadrantsIndexError,
    QuadrantsNameError,
    QuadrantsRuntimeError,
    QuadrantsRuntimeTypeError,
    QuadrantsSyntaxError,
    QuadrantsTypeError,
)

__all__ = [
    "QuadrantsAssertionError",
    "QuadrantsCompilationError",
    "QuadrantsIndexError",
    "QuadrantsNameError",
    "QuadrantsRuntimeError",
    "QuadrantsRuntimeTypeError",
    "QuadrantsSyntaxError",
    "QuadrantsTypeError",
]
