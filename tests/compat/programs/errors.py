"""Bad kernels: each must raise the exception class Quadrants raises, with its words."""

# ruff: noqa: F821, F841, PLR0133 - the kernels are wrong on purpose

import importlib
import os

qd = importlib.import_module(os.environ.get("QD_IMPL", "quadrants"))
qd.init(arch=qd.cpu, offline_cache=False, print_full_traceback=False)

QUADRANTS = [
    "QuadrantsSyntaxError",
    "QuadrantsTypeError",
    "QuadrantsNameError",
    "QuadrantsCompilationError",
    "QuadrantsRuntimeTypeError",
]


def report(name, call, *words):
    """The most specific Quadrants class the error is, and whether each of `words` is in it."""
    try:
        call()
    except Exception as e:  # noqa: BLE001
        cls = next((c for c in QUADRANTS if isinstance(e, getattr(qd, c))), None)
        cls = cls or next(
            c.__name__ for c in (ValueError, TypeError, Exception) if isinstance(e, c)
        )
        print(name, cls, *[w in str(e) for w in words])
    else:
        print(name, "no error")


@qd.kernel
def two(a: qd.i32, b: qd.i32) -> qd.i32:
    return a + b


@qd.func
def helper(a, b, c=3):
    return a + b + c


@qd.kernel
def func_missing() -> qd.i32:
    return helper(1, c=3)


@qd.kernel
def func_unknown() -> qd.i32:
    return helper(1, 2, d=3)


@qd.kernel
def func_twice() -> qd.i32:
    return helper(1, a=3, b=3)


@qd.kernel
def func_defaults() -> qd.i32:
    return helper(1, 2) * 100 + helper(b=2, a=1, c=4)


@qd.kernel
def unknown_name():
    a + 1


@qd.kernel
def annotated_twice():
    d: qd.i32 = 2
    d: qd.f32 = 2.0


@qd.kernel
def not_a_float(x: qd.f32) -> qd.i32:
    return not x


@qd.kernel
def invert_a_float(x: qd.f32) -> qd.i32:
    return ~x


@qd.kernel
def three_range():
    for i in range(1, 2, 3):
        pass


@qd.kernel
def float_to_int_literal() -> qd.i32:
    return qd.i32(3.5)


@qd.kernel
def int_to_float_literal() -> qd.f32:
    return qd.f32(0)


@qd.kernel
def two_args_literal() -> qd.i64:
    return qd.i64(1, 2)


@qd.kernel
def beyond_default_ip() -> qd.i64:
    return 2**40


@qd.kernel
def beyond_u16() -> qd.u16:
    return qd.u16(-1)


@qd.kernel
def static_check():
    qd.static_assert(1 == 2, "one is not two")


@qd.kernel
def bad_spec(n: qd.i32):
    print(f"{n:u}")


@qd.kernel
def triple_ndrange():
    for i in qd.ndrange((1, 2, 3)):
        pass


@qd.kernel
def float_ndrange():
    for i in qd.ndrange((1.1, 10.5)):
        pass


@qd.kernel
def ndrange_targets():
    for i in qd.ndrange(4, 4):
        pass


GENERATOR = (n for n in range(3))


@qd.kernel
def generator_ndrange():
    for I in qd.grouped(qd.ndrange(*GENERATOR)):
        pass


@qd.kernel
def static_break(n: qd.i32):
    for b in range(2):
        for i in qd.static(range(3)):
            if i >= n:
                break


@qd.kernel
def membership(a: qd.template()) -> qd.i32:
    b = 0
    if a in [qd.i32, qd.u32]:
        b = 1
    return b


@qd.kernel
def runtime_static_assert():
    value = False
    qd.static_assert(value, "Oh, no!")


@qd.kernel
def too_many_fields():
    print(f"{1} {2} {3}")


@qd.kernel
def unused_keyword(k: qd.f32):
    print("".format())


report("missing", lambda: two(2), "Missing argument 'b'")
report("keyword missing", lambda: two(b=2), "Missing argument 'a'")
report("unexpected", lambda: two(1, 2, c=2), "Unexpected argument 'c'")
report("too many", lambda: two(1, 2, 3), "Too many arguments")
report("func missing", func_missing, "Missing argument 'b'")
report("func unknown", func_unknown, "Unexpected argument 'd'")
report("func twice", func_twice, "Multiple values for argument 'a'")
print("func defaults", func_defaults())
report("name", unknown_name, 'Name "a" is not defined')
report("annotated twice", annotated_twice)
report("not float", lambda: not_a_float(1.0), "takes integral inputs only")
report("invert float", lambda: invert_a_float(1.0), "takes integral inputs only")
report("range 3", three_range, "Range should have 1 or 2 arguments, found 3")
report("float literal", float_to_int_literal, "Floating-point literals must be annotated")
report("int literal", int_to_float_literal, "Integer literals must be annotated with a integer")
report("two args", two_args_literal, "A primitive type can only decorate a single expression.")
report("default_ip", beyond_default_ip, "exceeded the range of default_ip")
report("specified dtype", beyond_u16, "exceeded the range of specified dtype")
report("static assert", static_check, "one is not two")
report("printf spec", lambda: bad_spec(1), "'u' doesn't match 'i32'.")
report("ndrange 3", triple_ndrange, "should be a scalar or a tuple/list like (begin, end)")
report("ndrange float", float_ndrange, "should be an integer scalar or a tuple/list of (int, int)")
report(
    "ndrange targets", ndrange_targets, "number of the loop variables not equal to the dimension"
)
report("ndrange generator", generator_ndrange)
report("ndrange axes", lambda: qd.ndrange(4, 5, axes=(0, 0)), "is not a permutation")
report(
    "ndrange axes type", lambda: qd.ndrange(4, 5, axes=(True, False)), "entries must be Python ints"
)
report("static break", lambda: static_break(0), "You are trying to `break` a static `for` loop")
report("in", lambda: membership(qd.i32), '"In" is only supported inside `qd.static`.')
report("static assert runtime", runtime_static_assert, "Static assert with non-static condition")
report(
    "format arity", too_many_fields, "Expected 3 positional argument(s), but received 4 instead."
)
report("format keyword", lambda: unused_keyword(1.0), "Keyword 'k' not used.")
