"""`quadrants.lang.ast.symbol_resolver`: `ASTResolver`, which tells what a name or a dotted name
in a program's source (`qd.kernel`, `qd.lang.ops.atomic_add`) stands for in a given namespace, for
code that inspects kernels' source as Quadrants' tools do."""

from __future__ import annotations

import ast

from ...compiler.frontend.scope import dotted

MISSING = object()


class ASTResolver:
    """Resolves `Name` and `Attribute` chains against a namespace (a dict such as `globals()`)."""

    @staticmethod
    def resolve_value(node: ast.AST, scope: object) -> object:
        """The object `node` (`a`, `a.b.c`) names in `scope`, else None; any other expression
        (`x[i].attr`, `(a + b).attr`) is None."""
        name = dotted(node) if isinstance(node, ast.expr) else None
        if name is None:
            return None
        for attr in name.split("."):
            if isinstance(scope, dict):
                scope = scope.get(attr, MISSING)
            else:
                scope = getattr(scope, attr, MISSING)
            if scope is MISSING:
                return None
        return scope

    @staticmethod
    def resolve_to(node: ast.AST, wanted: object, scope: dict) -> bool:
        """Whether `node` names the very object `wanted` in `scope`."""
        return wanted is not None and ASTResolver.resolve_value(node, scope) is wanted
