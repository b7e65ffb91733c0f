"""Changes to the caller's objects (lists, dicts, attributes, globals) stay in the graph: the
host replays each changed object's final state after the graph, and guards keep the trace's
view of which objects are distinct and which keys a dict has (see lib/Frontend/SideEffects.cpp).
Every test compares with eager Python, call after call."""

import numpy as np
import pytest

import dynamir

COUNTER = {"calls": 0}


def check(f, *calls):
    """Runs f eagerly and compiled on fresh copies of each call's arguments (built by the
    callables in `calls`), comparing results and the arguments afterwards."""
    compiled = dynamir.compile(f)
    for make in calls:
        eager_args, compiled_args = make(), make()
        want = f(*eager_args)
        got = compiled(*compiled_args)
        assert repr(got) == repr(want)
        assert repr(compiled_args) == repr(eager_args)
    return compiled


def test_append_to_an_argument_then_read_another_argument():
    def f(x, a, b):
        a.append(x * 2)
        return len(b), x + len(a)

    x = np.ones(2)
    check(f, lambda: (x, [1], [1, 2]), lambda: (x, [0], [5, 6]))
    # The same list as both arguments, passing every other guard of the first trace: the
    # distinct guard fails, and the new trace sees one list (and does not change it in the
    # graph).
    compiled = dynamir.compile(f)
    compiled(x, [1], [1])
    shared, got_list = [1], [1]
    want = f(x, shared, shared)
    got = compiled(x, got_list, got_list)
    assert repr(got) == repr(want) and repr(got_list) == repr(shared)
    assert "L['a']: is the same object as L['b']" in dynamir.counters()["guard_failures"]


def test_distinct_guard_names_the_other_objects():
    def f(a, b):
        a.append(1)
        return b[0]

    result = dynamir.trace(f, [0], [np.ones(2)])
    assert [(g.kind, g.source) for g in result.guards if g.kind == "distinct"] == \
        [("distinct", "L['a']")]
    assert "[\"L['b']\"]" in next(g.text for g in result.guards if g.kind == "distinct")
    assert result.graph_breaks == []


def test_dict_key_order_is_guarded():
    def f(x, d):
        return [v * x for v in d.values()]

    check(f, lambda: (np.ones(1), {"a": 1, "b": 2}), lambda: (np.ones(1), {"b": 2, "a": 1}))


def test_changes_are_replayed_before_a_break_goes_on():
    def f(x, log):
        log.append(x * 2)
        print("logged", len(log))
        dynamir.graph_break()
        log.append(x + 1)
        return len(log)

    check(f, lambda: (np.ones(2), []), lambda: (np.ones(2), [np.zeros(1)]))


def test_global_counter():
    def f(x):
        COUNTER["calls"] += 1
        return x * COUNTER["calls"]

    compiled = dynamir.compile(f)
    COUNTER["calls"] = 0
    want = [f(np.ones(1)).tolist() for _ in range(3)]
    COUNTER["calls"] = 0
    got = [compiled(np.ones(1)).tolist() for _ in range(3)]
    assert got == want and COUNTER["calls"] == 3


def test_an_object_reached_twice_is_not_changed_in_the_graph():
    class Box:
        pass

    def f(x, a, b):
        a.items.append(x)
        return len(b.items)

    box = Box()
    box.items = []
    eager = Box()
    eager.items = []
    assert f(np.ones(1), eager, eager) == dynamir.compile(f)(np.ones(1), box, box)
    assert len(box.items) == len(eager.items) == 1


class Holder:
    def __repr__(self):  # its state, which check() compares
        return f"Holder({vars(self)})"


def test_setattr_is_an_attribute_store():
    # setattr with a constant name is STORE_ATTR: replayed after the graph, read back by the
    # trace, no break.
    def f(h, x):
        setattr(h, "scale", 3)
        setattr(h, "value", x * getattr(h, "scale"))
        return h.value + 1

    def make():
        h = Holder()
        h.scale = 1
        return h, np.arange(3.0)

    for _ in range(2):
        (h1, x1), (h2, x2) = make(), make()
        want, got = f(h1, x1), dynamir.compile(f)(h2, x2)
        assert np.array_equal(got, want)
        assert h2.scale == h1.scale and np.array_equal(h2.value, h1.value)
    assert dynamir.explain(f, *make()).graph_break_count == 0


def test_hasattr_sees_attributes_the_frame_stored():
    # The store is replayed after the graph: until then only the trace knows the object has
    # the attribute (hasattr answered from the real object, False, and took the other branch).
    def f(h, x):
        h.new = 1
        if hasattr(h, "new"):
            x = x + getattr(h, "new", 5)
        return x - getattr(h, "missing", 2)

    def make():
        return Holder(), np.arange(3.0)

    check(f, make, make)
    assert dynamir.explain(f, *make()).graph_break_count == 0


def test_attribute_deletion_is_replayed():
    # `del h.tmp` and delattr on a caller's object are recorded as deletions and replayed
    # after the graph (a deletion of what the frame stored first deletes nothing); reads after
    # it see the attribute gone; deleting a missing attribute raises as eagerly.
    def f(h, x):
        del h.tmp
        h.extra = 1
        delattr(h, "extra")
        h.kept = 2
        return x * (2 if hasattr(h, "tmp") else 3) + getattr(h, "extra", 10)

    def make():
        h = Holder()
        h.tmp = 1
        return h, np.arange(3.0)

    check(f, make, make)
    assert dynamir.explain(f, *make()).graph_break_count == 0

    def missing(h, x):
        del h.tmp
        return x + h.tmp

    for fn in (missing, dynamir.compile(missing)):
        h, x = make()
        with pytest.raises(AttributeError):
            fn(h, x)


class Registry:
    count = 0
    scale = 1.0

    def __init__(self):
        Registry.count += 1  # the module's global, as the frame reads it: one Var


class SubRegistry(Registry):
    pass


def test_class_attribute_stores_are_replayed():
    # A class's attribute stored in the frame (also from an inlined __init__) is replayed with
    # setattr on the class; reads through the class, a subclass and instances see the store,
    # unless an instance's own attribute shadows it.
    def f(x, shadowed):
        Registry()
        r = Registry()
        Registry.scale = Registry.scale * 2
        sub = SubRegistry()
        return (x * Registry.count * r.scale, sub.count, SubRegistry.scale, shadowed.scale,
                hasattr(SubRegistry, "count"))

    def run(fn):
        Registry.count, Registry.scale = 0, 1.0
        shadowed = Registry.__new__(Registry)
        shadowed.scale = 5.0
        return repr(fn(np.ones(2), shadowed)), Registry.count, Registry.scale

    compiled = dynamir.compile(f)
    for _ in range(2):
        assert run(compiled) == run(f) == ("(array([6., 6.]), 3, 2.0, 5.0, True)", 3, 2.0)
    assert dynamir.explain(f, np.ones(2), Registry()).graph_break_count == 0
    assert dynamir.counters()["eager_runs"] == 0


def test_class_attribute_changes_that_break():
    class Plain:
        count = 0

    def special(x):
        Plain.__doc__ = "changed"  # what a class's special attributes do is type's own
        return x + 1

    def method(x):
        Plain.double = lambda self: 2  # a function, which instances would bind
        return x + 1

    def deletion(x):
        del Plain.count
        return x + 1

    before = dict(vars(Plain))

    def run(fn):
        result = fn(np.ones(2)).tolist(), sorted(vars(Plain))
        for name in set(vars(Plain)) - set(before):
            delattr(Plain, name)
        for name, value in before.items():
            if name not in ("__dict__", "__weakref__"):
                setattr(Plain, name, value)
        return result

    for fn, reason in [(special, "a special attribute of a class"),
                       (method, "a function or descriptor stored into a class"),
                       (deletion, "a deletion of a class attribute")]:
        assert run(dynamir.compile(fn)) == run(fn)
        assert reason in str(dynamir.explain(fn, np.ones(2))), fn
        run(lambda x: x)
