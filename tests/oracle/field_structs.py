"""Struct types for `field_programs.py` defined in class bodies (this module's annotations are
evaluated where they stand, as Quadrants' `@qd.dataclass` needs): a method defined in the class
body writes its caller's struct through `self`."""

from typing import Any


def body_type(qd: Any) -> Any:
    @qd.dataclass
    class Body:
        p: qd.math.vec3
        q: qd.math.vec3
        k: qd.i32

        @qd.func
        def blend(self, other, extra):
            self.p = (self.p + (other.p + other.q) / 2) / 2 + extra
            self.k += other.k

        @qd.func
        def push(self, dk):
            self.k += dk
            self.q.y -= 0.5

    return Body
