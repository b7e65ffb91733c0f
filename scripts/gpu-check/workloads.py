"""The GPU check's workloads, shared by prepare.py (numpy: traced, compiled, reference outputs)
and torch_peer.py (torch eager and torch.compile on the GPU machine).

Each workload: name, the function (written once against a namespace `m` that is numpy or
torch), input shapes, whether outputs are checked against numpy, and the minimum bytes a call
must move (every input read once, every output written once): the bandwidth figures divide
that by the time per call, as peak-bandwidth comparisons do. The models of bench/model_zoo.py
are workloads too (prepare.py traces them; model_slug names them).
"""

import re


def chain(m, x):
    return m.cos(m.sin(x * 2) + 1) * 3


def rowsum(m, x):
    return x.sum(1)


def linear_relu(m, x, w, b):
    if m.__name__ == "torch":
        return m.relu(x @ w + b)
    return m.maximum(x @ w + b, 0)


def softmax(m, x):
    if m.__name__ == "torch":
        return m.softmax(x, 1)
    e = m.exp(x - x.max(1, keepdims=True))
    return e / e.sum(1, keepdims=True)


WORKLOADS = [
    # name, function, input shapes, checked against numpy
    ("chain_1M", chain, [(1 << 20,)], True),
    ("chain_64M", chain, [(1 << 26,)], False),
    ("rowsum_1024x1024", rowsum, [(1024, 1024)], True),
    ("rowsum_8192x8192", rowsum, [(8192, 8192)], False),
    ("softmax_1024x1024", softmax, [(1024, 1024)], True),
    ("softmax_8192x8192", softmax, [(8192, 8192)], False),
    # A matrix product (cuBLAS in Dynamir and in torch): compare times, not bandwidth.
    ("linear_relu_256x1024", linear_relu, [(256, 1024), (1024, 1024), (1024,)], True),
    ("linear_relu_4096x4096", linear_relu, [(4096, 4096), (4096, 4096), (4096,)], False),
]


def model_slug(name):
    """A model's name in bench/model_zoo.py as a workload name: "lenet (batch 64)" -> "lenet_batch_64"."""
    return re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")


def output_shape(name, shapes):
    if name.startswith("rowsum"):
        return (shapes[0][0],)
    if name.startswith("linear_relu"):
        return (shapes[0][0], shapes[1][1])
    return shapes[0]


def bytes_moved(name, shapes):
    elements = 0
    for s in shapes:
        n = 1
        for d in s:
            n *= d
        elements += n
    out = 1
    for d in output_shape(name, shapes):
        out *= d
    return 4 * (elements + out)
