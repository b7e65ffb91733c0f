"""Matrix products of every rank on the CPU backend, against numpy and torch eager.

Products of realistic size go through BLAS (dyn-blas): `linear` and `x @ W` on batched inputs
as one rank-2 product over all rows, batched products as one call per batch element, with
transposed and broadcast operands. These tests pin the values; test/Transforms/dyn-blas.mlir
and test/Conversion/DynToLinalg/matmul.mlir pin the IR.
"""
import numpy as np
import pytest
import torch

import dynamir

RNG = np.random.default_rng(7)


def rand(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


def check(fn, *args, rtol=1e-5):
    want = fn(*args)
    dynamir.reset()
    compiled = dynamir.compile(fn)
    for _ in range(2):
        got = compiled(*args)
        assert type(got) is type(want) and got.dtype == want.dtype and got.shape == want.shape
        # BLAS sums (torch's MKL or numpy's OpenBLAS, kernels picked by CPU) round apart by a
        # few ulps of the largest terms: near-zero results need a tolerance on that scale.
        scale = max(1.0, float(np.abs(np.asarray(want)).max(initial=0)))
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=rtol, atol=rtol * scale)
    c = dynamir.counters()
    assert c["graph_breaks_hit"] == 0 and c["eager_runs"] == 0 and c["graphs_compiled"] == 1, c


SHAPES = [
    ((4, 64, 256), (256, 128)),         # a batch of sequences times one matrix
    ((2, 3, 64, 128), (128, 64)),       # two batch dimensions
    ((8, 64, 128), (8, 128, 64)),       # bmm
    ((2, 4, 64, 32), (2, 4, 32, 64)),   # attention-shaped
    ((8, 1, 64, 128), (3, 128, 64)),    # numpy batch broadcasting both ways
    ((64, 128), (4, 128, 64)),          # one matrix times a batch
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("lhs,rhs", SHAPES)
def test_numpy_products(lhs, rhs, dtype):
    check(lambda a, b: a @ b, rand(*lhs, dtype=dtype), rand(*rhs, dtype=dtype))


def test_transposed_operands():
    q, k = rand(2, 4, 64, 32), rand(2, 4, 64, 32)
    check(lambda q, k: q @ np.swapaxes(k, -1, -2), q, k)
    check(lambda q, k: np.swapaxes(q, -1, -2) @ k, q, k)
    check(lambda a, b: a.T @ b, rand(128, 64), rand(128, 96))


@pytest.mark.parametrize("bias", [True, False])
def test_torch_linear_of_every_rank(bias):
    lin = torch.nn.Linear(256, 512, bias=bias)
    with torch.no_grad():
        for shape in [(256,), (16, 256), (4, 64, 256), (2, 2, 32, 256)]:
            check(lambda x: lin(x), torch.from_numpy(rand(*shape)), rtol=1e-4)


def test_attention_scores_and_values():
    def attention(q, k, v):
        s = torch.softmax(q @ k.transpose(-2, -1) * 0.125, dim=-1)
        return s @ v
    q, k, v = (torch.from_numpy(rand(2, 4, 64, 32)) for _ in range(3))
    check(attention, q, k, v, rtol=1e-4)


SDPA = [dict(), dict(is_causal=True), dict(scale=0.3), dict(dropout_p=0.0)]


@pytest.mark.parametrize("kwargs", SDPA, ids=str)
@pytest.mark.parametrize("lengths", [(16, 16), (16, 20), (20, 12)], ids=str)
def test_scaled_dot_product_attention(kwargs, lengths):
    F = torch.nn.functional
    q = torch.from_numpy(rand(2, 4, lengths[0], 8))
    k, v = (torch.from_numpy(rand(2, 4, lengths[1], 8)) for _ in range(2))
    with torch.no_grad():
        check(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, **kwargs), q, k, v)
        keep = torch.from_numpy(RNG.random(lengths) > 0.3)
        keep[:, 0] = True  # no query without a key (a row of -inf is NaN)
        check(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, attn_mask=keep), q, k, v)
        bias = torch.from_numpy(rand(*lengths))
        check(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, attn_mask=bias), q, k, v)


def test_scaled_dot_product_attention_with_dropout_breaks():
    F = torch.nn.functional
    q = torch.from_numpy(rand(1, 2, 4, 8))
    fn = lambda q: F.scaled_dot_product_attention(q, q, q, dropout_p=0.5)  # random: eager
    assert [b.reason for b in dynamir.explain(fn, q).break_reasons] == [
        "scaled_dot_product_attention with dropout (random)"]


def test_activation_between_products_is_computed_once():
    # The GELU MLP of the models issue: GELU between two linears on a 3-D input.
    fc1, fc2 = torch.nn.Linear(256, 1024), torch.nn.Linear(1024, 256)
    with torch.no_grad():
        check(lambda x: fc2(torch.nn.functional.gelu(fc1(x))),
              torch.from_numpy(rand(4, 64, 256)), rtol=1e-4)


def test_batch_size_changes():
    lin = torch.nn.Linear(64, 64)
    compiled = dynamir.compile(lambda x: lin(x))
    with torch.no_grad():
        for batch in (3, 5, 7):
            x = torch.from_numpy(rand(batch, 32, 64))
            np.testing.assert_allclose(compiled(x).numpy(), lin(x).numpy(), rtol=1e-4, atol=1e-5)


def test_products_of_empty_and_one_row_matrices_call_no_blas_with_bad_leading_dimensions(capfd):
    """A product of 0 rows (a mask that selects nothing) has leading dimensions no BLAS accepts:
    MKL printed "Parameter 13 was incorrect on entry to SGEMM" (difftest 3103000007:35). An empty
    product adds nothing; one of a single row gets a valid leading dimension."""
    torch = pytest.importorskip("torch")

    def f(x, m):
        v = x[None, torch.where(m)[0]]
        return v @ v.transpose(-1, -2), x[m] @ x.T, x[m].T @ x[m]

    for dtype in (torch.float32, torch.float64):
        x = torch.arange(12.0, dtype=dtype).reshape(4, 3) / 7
        for m in ([False] * 4, [False, True, False, False], [True, False, True, True]):
            m = torch.tensor(m)
            for got, want in zip(dynamir.compile(f)(x, m), f(x, m)):
                assert got.shape == want.shape and torch.allclose(got, want)
    assert "ERROR" not in capfd.readouterr().out
