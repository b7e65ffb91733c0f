# Each graph-break kind with its reason and line, and the eager-only fallback.
# RUN: %python %s 2>&1 | FileCheck %s

import numpy as np

import dynamir

x = np.ones(3, dtype=np.float32)


def show(fn, *args):
    result = dynamir.trace(fn, *args)
    print("==", fn.__name__)
    print(result)
    for b in result.graph_breaks:
        print(f"break {b.kind} line {b.lineno}: {b.reason}")
    if result.eager_only:
        print("eager:", result.eager_reason)


def requested(x):
    y = x + 1
    dynamir.graph_break()
    return y


# CHECK-LABEL: == requested
# CHECK: %[[Y:.*]] = dyn.add
# CHECK: dyn.graph_break requested "dynamir.graph_break()" at "{{.*}}graph_breaks.py" : 23 resume [{{[0-9]+}}] (%[[Y]] : tensor<3xf32>)
# CHECK: break requested line 23: dynamir.graph_break()
show(requested, x)


def calls_print(x):
    y = x + 1
    print("side effect", y)
    return y


# A print is no break: the host makes it once the graph has run, with the array it printed
# as a result of the graph of its own (a copy).
# CHECK-LABEL: == calls_print
# CHECK: func.func @calls_print(%arg0: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) attributes {dyn.output = "_fx(%0, (), (), ((('side effect', %1, ), {}), ))"}
# CHECK: %[[Y:.*]] = dyn.add
# CHECK: return %[[Y]], %[[Y]]
show(calls_print, x)


def print_in_branch(x):
    if x.sum() > 0:
        print("positive")
        x = x + 1
    return x


# Inside a data-dependent branch, it is a break, and the host's branch decides.
# CHECK-LABEL: == print_in_branch
# CHECK: %[[P:.*]] = dyn.gt
# CHECK-NOT: dyn.if
# CHECK: dyn.graph_break data_dependent_branch "`if` on a tensor cannot stay in the graph: call to print inside a data-dependent branch (output must happen for real)" at "{{.*}}graph_breaks.py" : [[# @LINE - 10]] resume [{{[0-9]+}}, {{[0-9]+}}] (%[[P]] : tensor<i1>)
show(print_in_branch, x)


def return_in_branch(x):
    if x.sum() > 0:
        return x * 2
    return x


# A return on one side: the other side is the rest of the frame, and the dyn.if yields what
# the frame returns.
# CHECK-LABEL: == return_in_branch
# CHECK: %[[R:.*]] = dyn.if %{{.*}} : tensor<i1> -> tensor<3xf32> {
# CHECK: %[[D:.*]] = dyn.mul %arg0
# CHECK: dyn.yield {fresh = array<i64: 0>} %[[D]] : tensor<3xf32>
# CHECK: } else {
# CHECK: dyn.yield %arg0 : tensor<3xf32>
# CHECK: return %[[R]] : tensor<3xf32>
# CHECK-NOT: break
show(return_in_branch, x)


def return_in_loop_branch(x):
    for i in range(2):
        if x.sum() > i:
            return x * 2
    return x


# The rest of the frame is the rest of the loop: a break (3.11 notices the loop's iterator
# advanced inside the branch, 3.12's bytecode sends the other side back to the loop's head).
# CHECK-LABEL: == return_in_loop_branch
# CHECK-NOT: dyn.if
# CHECK: dyn.graph_break data_dependent_branch "`if` on a tensor cannot stay in the graph: {{advancing an iterator inside a data-dependent branch|the sides of a data-dependent branch do not rejoin}}"
show(return_in_loop_branch, x)


def divergent_types(x):
    if x.sum() > 0:
        x = x.reshape(3, 1)
    return x


# CHECK-LABEL: == divergent_types
# CHECK: dyn.graph_break data_dependent_branch "`if` on a tensor cannot stay in the graph: the sides of a data-dependent branch produce different types: f32[3,1] vs f32[3]"
show(divergent_types, x)


def while_on_tensor(x):
    y = x
    while x.sum() > 0:
        y = x  # the caller's array in the first iteration only: not one dyn.while
        x = x - 1
    return x, y


# CHECK-LABEL: == while_on_tensor
# CHECK: dyn.graph_break data_dependent_loop "loop whose exit depends on a tensor value"
# CHECK: break data_dependent_loop line
show(while_on_tensor, x)


def item_to_python(x):
    s = float(x.sum())
    return x * s


# float() of a tensor is a Python number the graph computes: no break.
# CHECK-LABEL: == item_to_python
# CHECK: %[[S:.*]] = dyn.sum %arg0
# CHECK: %[[F:.*]] = dyn.cast %[[S]] to f64
# CHECK-NOT: dyn.graph_break
# CHECK: dyn.cast %[[F]] to f32
# CHECK-NOT: dyn.graph_break
# CHECK-LABEL: == item_in_condition
show(item_to_python, x)


def item_in_condition(x):
    if x.sum().item() > 0:
        return x
    return -x


# Its comparison with a number too: the `if` is a data-dependent branch, as on a tensor.
# CHECK: %[[S:.*]] = dyn.cast %{{.*}} to f64
# CHECK: %[[P:.*]] = dyn.gt %[[S]], %{{.*}} : tensor<f64>, tensor<f64>
# CHECK: dyn.if %[[P]]
show(item_in_condition, x)


def item_as_index(x):
    return x[int(x.argmax().item())]


# Where the host needs the number (an index here), the graph breaks.
# CHECK-LABEL: == item_as_index
# CHECK: dyn.graph_break data_dependent_value "the value of a number the graph computes (<number read from a tensor>) is needed on the host"
show(item_as_index, x)


def unknown_call(x):
    import math
    return x * math.factorial(3)


# CHECK-LABEL: == unknown_call
# CHECK: dyn.graph_break unsupported_bytecode "unsupported bytecode IMPORT_NAME"
show(unknown_call, x)


def generator(x):
    yield x


# CHECK-LABEL: == generator
# CHECK: eager: generators and coroutines are not traced
show(generator, x)


def uses_exceptions(x):
    try:
        return x + 1
    except ValueError:
        return x


# 3.11's zero-cost exceptions: a try block whose body does not raise is traced straight through.
# CHECK-LABEL: == uses_exceptions
# CHECK: %[[R:.*]] = dyn.add
# CHECK: return %[[R]]
show(uses_exceptions, x)


# CHECK-LABEL: == <lambda>
# CHECK: eager: L['x'] has unsupported dtype complex256
show(lambda x: x * 2, np.ones(3, dtype=np.clongdouble))
