"""`quadrants.types.annotations`: the template annotation under the path Quadrants code imports it
from."""

from ..core.language import Template, template

__all__ = ["Template", "template"]
