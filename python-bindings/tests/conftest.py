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
