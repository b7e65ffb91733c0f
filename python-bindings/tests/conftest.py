"""Every test session compiles into a fresh cache, so compilation itself is what is tested."""

import os
import tempfile

_cache = tempfile.TemporaryDirectory(prefix="dynamir-test-cache-")
os.environ["DYNAMIR_CACHE_DIR"] = _cache.name
