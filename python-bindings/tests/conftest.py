"""Every test session compiles into a fresh cache, so compilation itself is what is tested, and
every test starts and ends with dynamir.reset(), so counters and recompiles are its own. Each
test's random inputs depend on the test alone (see `seeded`)."""

import os
import sys
import tempfile
import zlib

import numpy as np

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
def seeded(request):
    """A test's random inputs do not depend on which tests ran before it in the same process (a
    -k selection, pytest-xdist's scheduling), so a failure reproduces alone: numpy's and torch's
    global generators and the test modules' own (a module-level `RNG`) start each test from a
    seed of its id."""
    seed = zlib.crc32(request.node.nodeid.encode())
    np.random.seed(seed)
    if "torch" in sys.modules:
        sys.modules["torch"].manual_seed(seed)
    for module in list(sys.modules.values()):
        if getattr(module, "__name__", "").startswith("test_") and isinstance(
                getattr(module, "RNG", None), np.random.Generator):
            module.RNG = np.random.default_rng(seed)
    yield


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
