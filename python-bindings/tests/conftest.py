"""Every test session compiles into a fresh cache, so compilation itself is what is tested, and
every test starts and ends with dynamir.reset(), so counters and recompiles are its own."""

import os
import tempfile

import pytest

_cache = tempfile.TemporaryDirectory(prefix="dynamir-test-cache-")
os.environ["DYNAMIR_CACHE_DIR"] = _cache.name

import dynamir  # noqa: E402  (after the cache directory is chosen)


@pytest.fixture(autouse=True)
def fresh():
    dynamir.reset()
    yield
    dynamir.reset()


@pytest.fixture(autouse=True)
def inference():
    """Graphs compute no gradients, so a frame whose tensors would record them (a module's
    parameters, with autograd on) runs eagerly. The tests compile models for inference, the way
    they are run for it: under torch.no_grad(). Tests of autograd behaviour enable it."""
    try:
        import torch
    except ImportError:
        yield
        return
    with torch.no_grad():
        yield
