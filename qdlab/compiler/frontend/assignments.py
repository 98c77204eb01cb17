"""Assignment: to names (locals, compile-time bindings), array elements and tuples; annotated and
augmented assignment (`x op= v` updates a place: `updates.py`); and to parts of vectors and
matrices (`v[0]`, `v.xy`, `m[i, :]`, `a[i]` and `a[i][0]` of a vector ndarray, entry by entry). A
part of the frontend's visitor."""

from __future__ import annotations

import ast

from qdlab.core import language as lang

from ...core.errors import QdTypeError, QuadrantsSyntaxError
from ...core.types import DType, LocalType
from .. import ir
from .scope import ATOMIC_AUG, BINOPS, GradOf, Local, LocalList, array_type, describe, dtype_of
from .struct_values import StructLocal, StructValue
from .structs import StructRef
from .updates import Updates
from .vectors import ElementRef, Vec, VecLocal


class Assignments(Updates):
    """Mixed into `Frontend` (with the updates of `updates.py`); uses its `visit`, `value`,
    `cast`, `binop`, `emit`, `error`, `find_local`, `resolve_static`, `subscript_target`, `scope`,
    `parallel_depth` and the vector helpers of `vectors.py`."""

    def assign_name(self, name: str, x: object, declared: DType | None = None) -> None:
        existing = self.find_local(name)
        self.check_not_a_parameter(name, existing)
        if isinstance(existing, StructRef):
            raise self.rebind_error(name, existing)
        if isinstance(existing, StructLocal):
            self.store_struct(existing, x, name)
            return
        if isinstance(x, (StructValue, StructLocal)):
            self.scope.frames[-1][name] = self.new_struct_local(name, self.struct_value(x))
            return
        if (
            name in self.scope.statics
            and existing is not None
            and not isinstance(existing, (Local, VecLocal))
        ):
            raise self.error(
                f"`{name}` was bound at compile time by `qd.static(...)` and cannot be assigned; "
                f"give the value a plain name (`{name} = 0 + ...`) to make it a local."
            )
        if isinstance(existing, VecLocal):
            self.store_vec_local(existing, x, name)
            return
        vec = self.vec_of(x) if isinstance(x, (Vec, lang.Matrix)) else None
        if isinstance(existing, Local) and vec is not None:
            raise self.error(
                f"`{name}` holds a {existing.ref.type.dtype} scalar; it cannot be given a {vec}.",
                QdTypeError,
            )
        if isinstance(existing, Vec) and not self.scope.is_func:
            self.writable_vec(name)  # refuses a kernel argument
        if isinstance(existing, Local):
            ref = existing.ref
            if declared is not None and declared != dtype_of(ref):
                raise self.error(
                    f"`{name}` is a {dtype_of(ref)} local; it cannot be annotated again as "
                    f"{declared} (a local keeps the type of its first assignment)."
                )
            dtype = dtype_of(ref)
            self.emit(ir.LocalStore, [ref, self.cast(self.value(x, dtype), dtype)])
            return
        if existing is not None and not self.scope.is_func:
            if (
                isinstance(existing, ir.Value)
                and existing.owner is not None
                and isinstance(existing.owner, ir.Arg)
            ):
                raise self.immutable_argument(name)
            if isinstance(existing, ir.Value):
                raise self.error(f"loop index `{name}` cannot be assigned in the loop body.")
        if vec is not None:
            self.scope.frames[-1][name] = self.new_vec_local(name, vec)
            return
        if type(x) is list and any(self.is_scalar(e) for e in x):
            if isinstance(existing, LocalList) and len(existing) == len(x):
                for k, e in enumerate(x):  # `verts = [...]` again: the elements are stored
                    self.store_list_element(existing, k, e, name)
                return
            self.scope.frames[-1][name] = LocalList(
                self.new_local(f"{name}[{k}]", e) if self.is_scalar(e) else e
                for k, e in enumerate(x)
            )
            return
        if not isinstance(x, (ir.Value, int, float, bool)):
            self.scope.frames[-1][name] = (
                x  # a Python object (tuple, dtype ...) bound at compile time
            )
            return
        self.scope.frames[-1][name] = self.new_local(name, self.value(x), declared)

    @staticmethod
    def is_scalar(x: object) -> bool:
        """A runtime scalar (not an array)."""
        return isinstance(x, ir.Value) and not ir.is_array(x)

    def store_list_element(self, lst: LocalList, k: int, value: object, name: str) -> None:
        """`lst[k] = value` in a list bound to a name: a store to its Local."""
        e = lst[k]
        if not isinstance(e, Local):
            raise self.error(
                f"`{name}[{k}]` is {describe(e)}, fixed while compiling; only the list's runtime "
                "scalars can be assigned."
            )
        if isinstance(value, (Vec, lang.Matrix, list, tuple)):
            raise self.error(f"`{name}[{k}]` holds a scalar; it cannot be given {describe(value)}.")
        dtype = dtype_of(e.ref)
        self.emit(ir.LocalStore, [e.ref, self.cast(self.value(value, dtype), dtype)])

    def list_element_store(self, target: ast.Subscript, value: object) -> bool:
        """`verts[1] = x` with `verts` a LocalList and a constant index; False otherwise."""
        if not isinstance(target.value, ast.Name):
            return False
        lst = self.find_local(target.value.id)
        if not isinstance(lst, LocalList):
            return False
        k = self.visit(target.slice)
        if isinstance(k, ir.Value) and isinstance(k.owner, ir.Const) and k.dtype.is_int:
            k = k.owner.attrs["value"]
        if not isinstance(k, int) or not -len(lst) <= k < len(lst):
            raise self.error(
                f"`{target.value.id}` is a list of {len(lst)}: it is indexed with a constant "
                "in range.",
                QdTypeError,
            )
        self.store_list_element(lst, k % len(lst), value, target.value.id)
        return True

    def new_local(self, name: str, v: ir.Value, dtype: DType | None = None) -> Local:
        """A mutable local `name` holding `v` (cast to `dtype` when given)."""
        t = dtype or dtype_of(v)
        ref = self.emit(ir.Alloca, (), LocalType(t), name)
        self.emit(ir.LocalStore, [ref, self.cast(v, t)])
        return Local(ref, self.parallel_depth)

    def visit_Assign(self, node: ast.Assign) -> None:
        value = self.visit(node.value)
        if isinstance(node.value, ast.Call) and self.resolve_callee(node.value.func) is lang.static:
            for target in node.targets:  # `n = qd.static(m.n)`: compile-time names, as in Quadrants
                self.static_assign(target, value)
            return
        for target in node.targets:
            self.assign_target(target, value)

    def static_assign(self, target: ast.expr, value: object) -> None:
        """`name = qd.static(...)`: binds a new compile-time name in the current block; as in
        Quadrants, only a name can be the target, and one the block already has cannot be bound
        again."""
        if isinstance(target, ast.Tuple):  # `x, y = qd.static(a, b)`
            values = value if isinstance(value, (tuple, list)) else None
            if values is None or len(values) != len(target.elts):
                raise self.error(
                    f"cannot unpack {describe(value)} into {len(target.elts)} names.", QdTypeError
                )
            for t, v in zip(target.elts, values):
                self.static_assign(t, v)
            return
        if not isinstance(target, ast.Name):
            raise self.error(
                "Static assign cannot be used on elements in arrays", QuadrantsSyntaxError
            )
        if target.id in self.scope.frames[-1]:
            raise self.error(
                f"Recreating variables is not allowed: `{target.id}` is already defined in this "
                "block; a qd.static(...) value needs a new name.",
                QuadrantsSyntaxError,
            )
        self.scope.frames[-1][target.id] = value
        self.scope.statics.add(target.id)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        declared = self.resolve_static(node.annotation)
        if isinstance(declared, lang.MatrixType) and isinstance(node.target, ast.Name):
            if node.value is None:
                raise self.error("a local must be given a value where it is declared.")
            self.assign_name(node.target.id, self.from_type(declared, [self.visit(node.value)]))
            return
        if not isinstance(declared, DType):
            raise self.error(
                "a local's annotation must be a scalar type such as `qd.f32`.", QdTypeError
            )
        if node.value is None:
            raise self.error("a local must be given a value where it is declared.")
        if not isinstance(node.target, ast.Name):
            raise self.error("only a plain name can be annotated.")
        self.assign_name(node.target.id, self.visit(node.value), declared)

    def assign_target(self, target: ast.expr, value: object) -> None:
        if isinstance(target, ast.Name):
            self.assign_name(target.id, value)
        elif isinstance(target, ast.Subscript):
            if (
                self.list_element_store(target, value)
                or self.struct_element_store(target, value)
                or self.assign_part(target, value)
            ):
                return
            array, indices = self.subscript_target(target)
            dtype = dtype_of(array) if isinstance(array, ir.Value) else dtype_of(array.array)
            v = self.cast(self.value(value, dtype), dtype)
            base, grad = GradOf.unpack(array)
            self.emit(ir.Store, [base, *indices, v], grad=grad)
        elif isinstance(target, ast.Attribute) and (
            self.struct_store(target, value) or self.assign_part(target, value)
        ):
            return
        elif isinstance(target, ast.Tuple):
            if isinstance(value, Vec):
                value = tuple(value.rows())
            elif isinstance(value, list):  # a Python list the kernel names: `a, b = coeffs`
                value = tuple(value)
            if not isinstance(value, tuple) or len(value) != len(target.elts):
                raise self.error(f"cannot unpack {describe(value)} into {len(target.elts)} names.")
            for t, v in zip(target.elts, value):
                self.assign_target(t, v)
        else:
            raise self.error(f"cannot assign to {type(target).__name__}.")

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        """`x op= v` on a place (`updates.py`); on any other name (a scalar @qd.func parameter),
        the new value is assigned."""
        op = BINOPS.get(type(node.op))
        if op is None:
            raise self.error("this augmented assignment is not supported.")
        if self.triplet_update(node):
            return
        rhs = self.visit(node.value)
        place = self.place(node.target)
        if place is not None:
            self.update(place, op, rhs, False, f"`{ast.unparse(node.target)}`")
            return
        if not isinstance(node.target, ast.Name):
            raise self.error("augmented assignment needs a name or an array element on the left.")
        old = self.visit(ast.Name(node.target.id, ast.Load()))
        if op in ATOMIC_AUG and isinstance(old, ir.Value) and not ir.is_array(old):
            t = dtype_of(old)
            rhs = self.cast(self.value(rhs, t), t)
        self.assign_name(node.target.id, self.binop(op, old, rhs))

    def triplet_update(self, node: ast.AugAssign) -> bool:
        """`A[i, j] += v` / `-= v` on a `qd.linalg.SparseMatrixBuilder` (`lang.TripletSink`): the
        call `A.insert_triplet(i, j, v)` (`-v`); False when the target is not one."""
        target = node.target
        if not isinstance(target, ast.Subscript):
            return False
        base = self.subscript_base(target.value)
        if not isinstance(getattr(base, "value", base), lang.TripletSink):  # a struct argument's
            return False
        if not isinstance(node.op, (ast.Add, ast.Sub)):
            raise self.error("Only operations '+=' and '-=' are supported on sparse matrices.")
        index = target.slice
        if not (isinstance(index, ast.Tuple) and len(index.elts) == 2):
            raise self.error("a sparse matrix builder is indexed with a row and a column: A[i, j].")
        value = node.value if isinstance(node.op, ast.Add) else ast.UnaryOp(ast.USub(), node.value)
        call = ast.Call(
            ast.Attribute(target.value, "insert_triplet", ast.Load()), [*index.elts, value], []
        )
        self.visit(ast.fix_missing_locations(ast.copy_location(call, node)))
        return True

    # -- parts of vectors and matrices -------------------------------------------------------------
    def part(
        self, target: ast.Subscript | ast.Attribute
    ) -> tuple[VecLocal | ElementRef | None, list | str | None]:
        """What a vector part target names: (a vector local, index items or a swizzle), (an
        element of a vector ndarray, index items / swizzle / None for all of it), or (None, None)
        when it is not a vector part (a scalar array element)."""

        def key() -> list | str:
            if isinstance(target, ast.Attribute):
                return target.attr
            return self.index_items(target.slice)

        base_node = target.value
        local = (
            self.writable_vec(base_node.id)
            if isinstance(base_node, ast.Name)
            else self.struct_vec_member(base_node)  # `v.p.x = 1` of a struct local's vector
        )
        if local is not None:
            return local, key()
        base = self.subscript_base(base_node)
        if isinstance(base, StructRef) and isinstance(target, ast.Attribute):
            raise self.member_assign_error(base, target.attr)
        if isinstance(base, ElementRef):
            return base, key()
        arr, grad = GradOf.unpack(base)
        if (
            isinstance(target, ast.Subscript)
            and isinstance(arr, ir.Value)
            and ir.is_array(arr)
            and array_type(arr).element
        ):
            _, indices = self.subscript_target(target)
            return ElementRef(arr, grad, tuple(indices)), None
        if isinstance(target, ast.Attribute):
            raise self.error(f"cannot assign to attribute `{target.attr}` of {describe(base)}.")
        return None, None

    def part_name(self, target: ast.Subscript | ast.Attribute) -> str:
        return f"`{ast.unparse(target.value)}`"

    def swizzle_items(self, ref: ElementRef, attr: str) -> list[list]:
        if len(ref.shape) != 1:
            raise self.error(f"a matrix has no attribute `{attr}`; index it, e.g. `m[0, 1]`.")
        return [[k] for k in self.swizzle(attr, ref.shape[0])]

    def assign_part(self, target: ast.Subscript | ast.Attribute, value: object) -> bool:
        base, key = self.part(target)
        if base is None:
            return False
        if isinstance(base, VecLocal):
            if isinstance(key, str):
                self.swizzle_write(base, key, value, self.part_name(target))
            else:
                self.vec_write(base, key, value, self.part_name(target))
            return True
        if isinstance(key, str):
            items = self.swizzle_items(base, key)
            values = (
                [value] if len(items) == 1 else self.entries_for((len(items),), value, f"`{key}`")
            )
            for it, x in zip(items, values):
                self.element_store(base, it, x)
            return True
        self.element_store(base, key, value)
        return True
