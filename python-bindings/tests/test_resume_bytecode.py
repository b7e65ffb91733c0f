"""Resume and step functions (dynamir.resume) built from hand-written resume plans, without the
tracer, on whichever CPython runs the tests (3.11, 3.12 or 3.13).

Each test breaks a small function the way the host does at a graph break: the breaking
instruction runs alone in a step function on the top of the value stack, then a resume
function takes the locals and the stack and runs the rest of the original bytecode. The
stack is written as the running interpreter has it, which is where the versions differ: a
call's NULL comes before the callable in 3.11 and 3.12 and after it in 3.13, 3.13 pushes a
keyword call's names as a tuple, 3.12+ runs comprehensions inline in the frame. The result
must be the original function's, with its side effects happening once, in order."""

import dis
import sys
import types

import pytest

from dynamir import resume

PY313 = sys.version_info >= (3, 13)
INLINE_COMPREHENSIONS = sys.version_info >= (3, 12)


class Null:
    """A NULL slot of the value stack."""

    def __repr__(self):
        return "NULL"


NULL = Null()


class Rest:
    """A for loop's iterator on the stack: the items it has left."""

    def __init__(self, items):
        self.items = tuple(items)


log = []


def helper(v):
    log.append(("helper", v))
    return v * 10


def scaled(v, scale=1):
    log.append(("scaled", v, scale))
    return v * scale


class Acc:
    def __init__(self):
        self.items = []

    def add(self, v, times=1):
        self.items += [v] * times
        return len(self.items)


class Box:
    @property
    def value(self):
        log.append("value")
        return 5


@pytest.fixture(autouse=True)
def clear_log():
    log.clear()


# -- plumbing: what compiler.py does with a resume plan -------------------------------------------
def instructions(fn):
    code = fn.__code__ if hasattr(fn, "__code__") else fn
    return list(dis.get_instructions(code))


def following(fn, ins):
    """The offset of the instruction after `ins`, past its inline caches."""
    listed = instructions(fn)
    return listed[listed.index(ins) + 1].offset


def calls(fn):
    return [ins for ins in instructions(fn) if ins.opname in ("CALL", "CALL_KW")]


def step_range(fn, call):
    """The instructions a host step runs for a call, as the tracer's plan gives them: CALL (or
    3.13's CALL_KW) with the PRECALL (3.11) and KW_NAMES (3.11, 3.12) that set it up."""
    listed = instructions(fn)
    k = listed.index(call)
    while k > 0 and listed[k - 1].opname in ("PRECALL", "KW_NAMES"):
        k -= 1
    return listed[k].offset, following(fn, call)


def call_stack(callee, *args, kwnames=(), self=None):
    """The values a call leaves on the stack for its CALL in the running interpreter."""
    if self is not None:
        head = [callee, self]  # a method: the function, then self, in every version
    elif PY313:
        head = [callee, NULL]
    else:
        head = [NULL, callee]
    return head + list(args) + ([tuple(kwnames)] if kwnames and PY313 else [])


def resume_at(fn, offset, locals_, stack):
    """Calls the resume function at `offset` with the named locals (the other co_varnames are
    unbound) and the stack, bottom first."""
    names = fn.__code__.co_varnames
    unbound = tuple(j for j, name in enumerate(names) if name not in locals_)
    layout = tuple("null" if v is NULL else "iter" if type(v) is Rest else "value"
                   for v in stack)
    go_on = resume.resume_function(fn, offset, layout, unbound)
    assert go_on.__code__.co_name == f"{fn.__code__.co_name}_resume_at_{offset}"
    instructions(go_on)  # well formed: dis decodes every instruction
    return go_on(*[locals_.get(name) for name in names],
                 *[None if v is NULL else v.items if type(v) is Rest else v for v in stack])


def step(fn, start, end, top):
    """Runs the instructions [start, end) on `top` in a step function: the new top."""
    stepper, produced = resume.step_function(fn, start, end, [v is NULL for v in top])
    assert stepper.__code__.co_argcount == len(top)
    out = stepper(*[None if v is NULL else v for v in top])
    assert type(out) is tuple and len(out) == produced
    return list(out)


def break_at_call(fn, call, locals_, below, top):
    """The host at a graph break on `call`: the call alone in a step function on the `top`
    stack values, then the rest of the frame in a resume function on `below` + its result."""
    start, end = step_range(fn, call)
    return resume_at(fn, end, locals_, list(below) + step(fn, start, end, top))


def varnames(fn, indices):
    return {fn.__code__.co_varnames[j] for j in indices}


# -- breaks and their continuations ---------------------------------------------------------------
def expression(a, b):
    c = a + 1
    return a * 2 + helper(b - c) * 3


def test_break_at_a_call_inside_an_expression_keeps_the_values_below_it():
    (call,) = calls(expression)
    a, b = 4, 9
    got = break_at_call(expression, call, {"a": a, "b": b, "c": a + 1}, [a * 2],
                        call_stack(helper, b - (a + 1)))
    assert log == [("helper", 4)]
    log.clear()
    assert got == expression(a, b) and log == [("helper", 4)]


def nested(a, b):
    return scaled(a, helper(b))


def test_break_at_a_call_inside_another_calls_arguments():
    # Below the break: the outer call's callable and NULL (in the order of the version).
    call = calls(nested)[0]
    got = break_at_call(nested, call, {"a": 2, "b": 3}, call_stack(scaled, 2),
                        call_stack(helper, 3))
    assert got == nested(2, 3) == 60 and log == [("helper", 3), ("scaled", 2, 30)] * 2


def starred(xs, a):
    return sum((*xs, helper(a)))


def test_break_inside_a_starred_display():
    # The list being built is on the stack; 3.12+ makes it a tuple with CALL_INTRINSIC_1.
    call = calls(starred)[0]
    got = break_at_call(starred, call, {"xs": (1, 2), "a": 4}, call_stack(sum) + [[1, 2]],
                        call_stack(helper, 4))
    assert got == starred((1, 2), 4) == 43


def keywords(a, b):
    return a + scaled(b, scale=3) * 2


def test_break_at_a_keyword_call():
    (call,) = calls(keywords)
    assert call.opname == ("CALL_KW" if PY313 else "CALL")
    got = break_at_call(keywords, call, {"a": 1, "b": 5}, [1],
                        call_stack(scaled, 5, 3, kwnames=("scale",)))
    assert got == keywords(1, 5) == 31
    assert log == [("scaled", 5, 3)] * 2


def method(acc, v):
    n = acc.add(v, times=2) + 1
    return n * 10


def test_break_at_a_method_call_with_keywords_runs_it_once():
    (call,) = calls(method)
    acc = Acc()
    got = break_at_call(method, call, {"acc": acc, "v": 7}, [],
                        call_stack(Acc.add, 7, 2, kwnames=("times",), self=acc))
    assert got == 30 and acc.items == [7, 7]
    assert method(Acc(), 7) == got


def attribute(b, k):
    return k + b.value * 2


def test_break_at_an_attribute_load():
    (load,) = [ins for ins in instructions(attribute)
               if ins.opname == "LOAD_ATTR" and ins.argval == "value"]
    end = following(attribute, load)
    box = Box()
    got = resume_at(attribute, end, {"b": box, "k": 1}, [1] + step(attribute, load.offset,
                                                                    end, [box]))
    assert got == attribute(box, 1) == 11 and log == ["value", "value"]


def loop(xs, k):
    total = 0
    for x in xs:
        total = total + helper(x) * k
    return total


def test_break_inside_a_for_loop_resumes_the_rest_of_the_loop():
    (call,) = calls(loop)
    xs = (1, 2, 3)
    got = break_at_call(loop, call, {"xs": xs, "k": 2, "total": 0, "x": 1},
                        [Rest(xs[1:]), 0], call_stack(helper, 1))
    assert log == [("helper", x) for x in xs]
    log.clear()
    assert got == loop(xs, 2) == 120 and log == [("helper", x) for x in xs]


def make_closure(k, m):
    def f(x):
        return k * 2 + helper(x) + (lambda v: v * m)(x)
    return f


def test_closures_keep_their_free_variables_when_the_stack_moves_them():
    # After the break the frame reads a free variable and builds a closure from another one
    # (3.13: LOAD_FAST on the free variable's slot), with two stack values among the locals.
    f = make_closure(3, 5)
    assert f.__code__.co_freevars == ("k", "m") and not f.__code__.co_cellvars
    call = calls(f)[0]
    got = break_at_call(f, call, {"x": 2}, [6], call_stack(helper, 2))
    assert got == f(2) == 6 + 20 + 10


def captures(k):
    g = lambda: k  # noqa: E731
    return helper(g())


def test_frames_with_captured_variables_are_not_resumed():
    call = calls(captures)[-1]
    with pytest.raises(resume.Unresumable, match="captured"):
        resume.resume_function(captures, following(captures, call), ("value",), ())


def after_comprehension(xs, k):
    ys = [x * 2 for x in xs]  # (capturing k would make it a cell in 3.11: not resumed)
    return helper(len(ys)) + ys[0] * k


def test_break_after_a_comprehension():
    call = calls(after_comprehension)[-1]
    start, end = step_range(after_comprehension, call)
    # 3.12+ keeps the comprehension variable in the frame, unbound again after it.
    assert ("x" in after_comprehension.__code__.co_varnames) == INLINE_COMPREHENSIONS
    assert varnames(after_comprehension, resume.live_locals(after_comprehension, end)) == {
        "ys", "k"}
    got = break_at_call(after_comprehension, call, {"xs": (2, 3), "k": 4, "ys": [4, 6]}, [],
                        call_stack(helper, 2))
    assert got == after_comprehension((2, 3), 4) == 36


def inside_comprehension(xs, k):
    return [helper(x) + k for x in xs]


def test_break_inside_a_comprehension():
    xs = (1, 2, 3)
    if INLINE_COMPREHENSIONS:
        # In the frame: the saved (unbound) x, the list, the iterator, then the call.
        fn = inside_comprehension
        locals_ = {"xs": xs, "k": 5, "x": 1}
    else:
        # 3.11: the comprehension is a function of its own, k a free variable of it.
        (code,) = [c for c in inside_comprehension.__code__.co_consts
                   if isinstance(c, types.CodeType)]
        fn = types.FunctionType(code, globals(), code.co_name, None, (types.CellType(5),))
        locals_ = {".0": iter(xs), "x": 1}
    (call,) = calls(fn)
    below = ([NULL] if INLINE_COMPREHENSIONS else []) + [[], Rest(xs[1:])]
    assert not resume.in_try_block(fn, call.offset)
    got = break_at_call(fn, call, locals_, below, call_stack(helper, 1))
    assert got == inside_comprehension(xs, 5) == [15, 25, 35]


def branch(x):
    y = x * 2
    if y:
        return y + 1
    return y - 1


@pytest.mark.parametrize("x", [1, 0])
def test_resume_at_either_target_of_a_data_dependent_branch(x):
    # The host pops the predicate (3.13: before TO_BOOL) and resumes where its truth leads.
    (jump,) = [ins for ins in instructions(branch)
               if ins.opname.startswith("POP_JUMP") and ins.opname.endswith("IF_FALSE")]
    target = following(branch, jump) if x * 2 else jump.argval
    assert resume_at(branch, target, {"x": x, "y": x * 2}, []) == branch(x)


def test_long_functions_jump_with_extended_arguments():
    source = "def long(a):\n" + "    a = a + 1\n" * 200 + "    return helper(a) + 1\n"
    namespace = {"helper": helper}
    exec(compile(source, "<long>", "exec"), namespace)
    long = namespace["long"]
    call = calls(long)[-1]
    assert call.offset > 2 * 256
    assert break_at_call(long, call, {"a": 200}, [], call_stack(helper, 200)) == 2001


# -- what the host asks about the original code ---------------------------------------------------
def returns_early(c, y):
    if c:
        return None
    return y


def reads_fused(a):
    b = helper(a)
    return a + b


def stores_fused(p, q):
    p, q = 1, 2
    return p + q


def maybe_unbound(c):
    if c:
        v = 1
    return v


def test_live_locals_follow_each_versions_loads_and_stores():
    # A return (3.12+: RETURN_CONST) does not fall through into the next block.
    first_return = [ins for ins in instructions(returns_early) if ins.opname.startswith("RETURN")]
    assert resume.live_locals(returns_early, first_return[0].offset) == set()
    assert varnames(returns_early, resume.live_locals(returns_early, 0)) == {"c", "y"}
    # 3.13 reads a and b with one LOAD_FAST_LOAD_FAST.
    store = [ins for ins in instructions(reads_fused) if ins.argval == "b"][0]
    assert varnames(reads_fused, resume.live_locals(reads_fused, store.offset)) == {"a"}
    assert varnames(reads_fused, resume.live_locals(reads_fused, following(reads_fused, store))
                    ) == {"a", "b"}
    # 3.13 writes p and q with one STORE_FAST_STORE_FAST: neither is read before.
    assert resume.live_locals(stores_fused, 0) == set()
    # 3.12+ reads a possibly unbound v with LOAD_FAST_CHECK.
    assert varnames(maybe_unbound, resume.live_locals(maybe_unbound, 0)) == {"c", "v"}


def comprehension_in_try(xs):
    try:
        return [helper(x) for x in xs]
    except ValueError:
        return []


def test_comprehensions_are_not_try_blocks_unless_inside_one():
    # 3.12+ gives an inlined comprehension an exception handler that only restores its
    # variable and re-raises: an exception there leaves the frame as it would without it.
    for fn, in_try in ((after_comprehension, False), (inside_comprehension, False),
                       (comprehension_in_try, True)):
        for call in calls(fn):
            assert resume.in_try_block(fn, call.offset) == in_try, (fn.__name__, call.offset)
    if INLINE_COMPREHENSIONS:
        assert after_comprehension.__code__.co_exceptiontable  # the handler is there


def test_instruction_lengths_are_the_interpreters():
    # Opcode numbers and inline cache sizes come from the running interpreter (3.13 renumbered
    # nearly all opcodes and keys its cache table by name).
    import json.decoder
    functions = [expression, keywords, method, attribute, loop, after_comprehension,
                 inside_comprehension, branch, comprehension_in_try, json.decoder.py_scanstring,
                 json.decoder.JSONObject]
    for fn in functions:
        want = [ins.offset for ins in instructions(fn) if ins.opname != "EXTENDED_ARG"]
        assert [at for at, _, _ in resume._instructions(fn.__code__.co_code)] == want
