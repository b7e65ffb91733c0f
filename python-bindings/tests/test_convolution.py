"""Convolutions (im2col and a BLAS product, one per group, or the runtime's direct kernel,
dyn.conv2d, for stride-1 float32 ones) and batch norm in inference, against torch eager, on
the compiled CPU backend and the eager backend, with no graph break."""
import numpy as np
import pytest
import torch
import torch.nn.functional as F

import dynamir

torch.manual_seed(3)


def check(fn, *args, backend=None, rtol=1e-4):
    with torch.no_grad():
        want = fn(*args)
        dynamir.reset()
        compiled = dynamir.compile(fn, **({"backend": backend} if backend else {}))
        for _ in range(2):
            got = compiled(*args)
            assert got.dtype == want.dtype and got.shape == want.shape
            np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=rtol, atol=rtol)
    c = dynamir.counters()
    assert c["graph_breaks_hit"] == 0 and c["eager_runs"] == 0, c


CONV2D = [
    dict(),
    dict(stride=2),
    dict(padding=1),
    dict(padding=(2, 1), stride=(1, 2)),
    dict(dilation=2, padding=2),
    dict(padding="same"),
    dict(padding="valid"),
]


@pytest.mark.parametrize("backend", [None, "eager"])
@pytest.mark.parametrize("kwargs", CONV2D, ids=str)
def test_conv2d(kwargs, backend):
    x, w, b = torch.randn(2, 3, 12, 10), torch.randn(8, 3, 3, 3), torch.randn(8)
    check(lambda x, w, b: F.conv2d(x, w, b, **kwargs), x, w, b, backend=backend)


@pytest.mark.parametrize("backend", [None, "eager"])
@pytest.mark.parametrize("groups,filters,kwargs", [(2, 4, dict()), (4, 8, dict(padding=1)),
                                                   (8, 8, dict(stride=2, padding=1)),  # depthwise
                                                   (8, 16, dict(dilation=2))], ids=str)
def test_grouped_conv2d(groups, filters, kwargs, backend):
    x, w = torch.randn(2, 8, 10, 9), torch.randn(filters, 8 // groups, 3, 3)
    check(lambda x, w: F.conv2d(x, w, groups=groups, **kwargs), x, w, backend=backend)


def test_grouped_conv1d_and_module():
    check(lambda x, w: F.conv1d(x, w, groups=2), torch.randn(2, 4, 20), torch.randn(6, 2, 3))
    conv = torch.nn.Conv2d(6, 6, 3, padding=1, groups=6).eval()
    check(lambda x: conv(x), torch.randn(1, 6, 7, 7))


def test_conv2d_shapes_and_dtypes():
    check(lambda x, w: F.conv2d(x, w), torch.randn(3, 9, 9), torch.randn(4, 3, 2, 2))  # unbatched
    check(lambda x, w: F.conv2d(x, w), torch.randn(2, 16, 8, 8), torch.randn(32, 16, 1, 1))
    x, w = torch.randn(2, 3, 8, 8, dtype=torch.float64), torch.randn(5, 3, 3, 3, dtype=torch.float64)
    check(lambda x, w: F.conv2d(x, w, padding=1), x, w, rtol=1e-10)


@pytest.mark.parametrize("kwargs", [dict(), dict(stride=2, padding=1), dict(dilation=3),
                                    dict(padding="same")], ids=str)
def test_conv1d(kwargs):
    check(lambda x, w, b: F.conv1d(x, w, b, **kwargs), torch.randn(2, 4, 20), torch.randn(6, 4, 3),
          torch.randn(6))


def test_conv_modules_and_batch_norm_in_eval():
    block = torch.nn.Sequential(torch.nn.Conv2d(8, 8, 3, padding=1, bias=False),
                                torch.nn.BatchNorm2d(8), torch.nn.ReLU()).eval()
    with torch.no_grad():  # statistics that are not the defaults
        block[1].running_mean.uniform_(-1, 1)
        block[1].running_var.uniform_(0.5, 2)
        block[1].weight.uniform_(0.5, 2)
        block[1].bias.uniform_(-1, 1)
    check(block, torch.randn(2, 8, 16, 16))
    bn1d = torch.nn.BatchNorm1d(6, affine=False).eval()
    check(bn1d, torch.randn(5, 6))


def test_what_torch_rejects_raises_the_same():
    # A kernel larger than the input, and channels that do not match: torch raises, so must
    # the compiled function (the call runs eagerly).
    for x, w, groups in [(torch.randn(1, 1, 2, 2), torch.randn(1, 1, 3, 3), 1),
                         (torch.randn(1, 2, 5, 5), torch.randn(1, 3, 3, 3), 1),
                         (torch.randn(1, 6, 5, 5), torch.randn(4, 2, 3, 3), 3),  # 4 filters
                         (torch.randn(1, 6, 5, 5), torch.randn(6, 3, 3, 3), 3)]:  # 3 per group
        with pytest.raises(RuntimeError):
            F.conv2d(x, w, groups=groups)
        with pytest.raises(RuntimeError):
            dynamir.compile(lambda x, w: F.conv2d(x, w, groups=groups))(x, w)


def test_training_batch_norm_updates_statistics_eagerly():
    bn = torch.nn.BatchNorm2d(3).train()
    x = torch.randn(4, 3, 5, 5)
    want_bn = torch.nn.BatchNorm2d(3).train()
    want = want_bn(x)
    got = dynamir.compile(bn)(x)
    torch.testing.assert_close(got, want)
    torch.testing.assert_close(bn.running_mean, want_bn.running_mean)
    torch.testing.assert_close(bn.running_var, want_bn.running_var)


# Shapes dyn-direct-convolutions gives the runtime's direct kernel (stride 1, float32, filters
# in fours, output rows in sixteens): odd channel counts, 1x1, 5x5 and 3x1 windows, unequal
# paddings, batch 1; each against torch, and the same bits on one thread and two.
DIRECT = [
    ((3, 5, 7, 18), (8, 5, 3, 3), 0),
    ((1, 32, 32, 32), (32, 32, 3, 3), 1),
    ((2, 3, 5, 16), (12, 3, 1, 1), 0),
    ((2, 7, 9, 32), (4, 7, 5, 5), 2),
    ((1, 6, 6, 30), (8, 6, 3, 1), (1, 1)),
    ((2, 4, 3, 14), (4, 4, 2, 3), (0, 2)),
]


@pytest.mark.parametrize("image,filters,padding", DIRECT, ids=str)
def test_direct_convolution(image, filters, padding):
    x, w = torch.randn(*image), torch.randn(*filters)
    fn = lambda x, w: F.relu(F.conv2d(x, w, padding=padding))
    check(fn, x, w)
    before = dynamir.get_num_threads()
    try:
        results = []
        for threads in (1, 2):
            dynamir.set_num_threads(threads)
            dynamir.reset()
            with torch.no_grad():
                results.append(dynamir.compile(fn)(x, w).numpy())
        np.testing.assert_array_equal(results[0], results[1])
    finally:
        dynamir.set_num_threads(before)


def test_direct_convolution_is_what_runs():
    # The residual block's convolution is a dyn.conv2d once dyn-direct-convolutions has run,
    # and no product of columns is left.
    x, w = torch.randn(4, 32, 32, 32), torch.randn(32, 32, 3, 3)
    traced = dynamir.trace(lambda x, w: F.conv2d(x, w, padding=1), x, w)
    traced.module.run_pipeline("dyn-optimize,dyn-split-graphs,dyn-direct-convolutions")
    text = str(traced.module)
    assert "dyn.conv2d" in text and "dyn.unfold" not in text and "dyn.matmul" not in text
