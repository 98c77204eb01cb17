"""`quadrants.lang.kernel_arguments`: `ArgMetadata`, how Quadrants describes a kernel parameter to
its `TemplateMapper` (`_template_mapper.py`)."""

from __future__ import annotations

import inspect


class ArgMetadata:
    """A parameter's annotation, name and default."""

    def __init__(
        self, annotation: object, name: object, default: object = inspect.Parameter.empty
    ) -> None:
        self.annotation = annotation
        self.name = name
        self.default = default

    def __repr__(self) -> str:
        return (
            f"{self.__class__.__name__}(annotation={self.annotation}, name={self.name}, "
            f"default={self.default})"
        )
