"""The disk cache of compiled graphs never serves a damaged or misplaced library: each test
damages entries the way a crash, a full disk or a stray copy would, then checks that a new
process neither crashes nor computes a wrong answer, and that the entries were built again."""

import hashlib
import os
import pathlib
import subprocess
import sys

import pytest

# argv[1] names the graphs to run: f, g or both. Prints graphs compiled and loaded from disk.
SCRIPT = """
import sys
import numpy as np, dynamir
x = np.linspace(-1, 1, 100, dtype=np.float32)
graphs = {
    "f": lambda x: np.cos(np.sin(x * 2) + 1) * 3,
    "g": lambda x: np.exp(x) - x * 5,
}
# Kept alive: counters() counts the graphs of live compiled functions.
compiled = {name: dynamir.compile(graphs[name]) for name in sys.argv[1]}
for name, function in compiled.items():
    got, want = function(x), graphs[name](x)
    assert np.allclose(got, want, rtol=1e-5, atol=1e-6), (name, got, want)
c = dynamir.counters()
print(c["graphs_compiled"], c["graphs_from_disk_cache"])
"""


def run(cache, graphs):
    """Runs SCRIPT in a new process; returns (compiled, from disk) and what it logged."""
    env = dict(os.environ, DYNAMIR_CACHE_DIR=str(cache), DYNAMIR_LOGS="cache")
    p = subprocess.run([sys.executable, "-c", SCRIPT, graphs], env=env, capture_output=True,
                       text=True)
    # A negative code is a signal: SIGBUS, SIGILL, SIGSEGV from a bad library.
    assert p.returncode == 0, f"exit {p.returncode}\n{p.stderr}"
    compiled, from_disk = map(int, p.stdout.split())
    return (compiled, from_disk), p.stderr


def entries(cache):
    return set(pathlib.Path(cache).glob("*.so"))


def compile_one(cache, graph):
    """Compiles one graph into the cache; returns its entry."""
    before = entries(cache)
    assert run(cache, graph)[0] == (1, 0)
    (entry,) = entries(cache) - before
    return entry


TRAILER = len("dynamir-graph-entry ") + 32 + 1 + 20 + 1 + 64 + 1


def library_of(entry):
    """The shared library of an entry, without its trailer."""
    return entry.read_bytes()[:-TRAILER]


def trailer_for(key, library):
    return (f"dynamir-graph-entry {key} {len(library):020d} "
            f"{hashlib.sha256(library).hexdigest()}\n").encode()


def assert_rebuilt(cache, graphs, reason):
    counts, log = run(cache, graphs)
    assert counts == (len(graphs), 0), log
    assert "[dynamir cache] rejected" in log and reason in log, log
    # The new entries are whole: the next process loads them without compiling.
    assert run(cache, graphs) == ((len(graphs), len(graphs)), "")


DAMAGE = {
    "truncated": lambda data: data[: len(data) // 2],
    "emptied": lambda data: b"",
    "trailer cut off": lambda data: data[:-TRAILER],
    "garbage": lambda data: os.urandom(len(data)),
    # A valid ELF header over garbage: what used to crash with SIGSEGV or SIGILL.
    "garbage after the ELF header": lambda data: data[:64] + os.urandom(len(data) - 64),
    "one byte flipped": lambda data: (data[: len(data) // 2] + bytes([data[len(data) // 2] ^ 1])
                                      + data[len(data) // 2 + 1:]),
}


@pytest.mark.parametrize("damage", DAMAGE)
def test_damaged_entry_is_rebuilt(tmp_path, damage):
    entry = compile_one(tmp_path, "f")
    entry.write_bytes(DAMAGE[damage](entry.read_bytes()))
    assert_rebuilt(tmp_path, "f", "rejected")


def test_swapped_entries_are_rebuilt(tmp_path):
    f, g = compile_one(tmp_path, "f"), compile_one(tmp_path, "g")
    f_bytes, g_bytes = f.read_bytes(), g.read_bytes()
    f.write_bytes(g_bytes)
    g.write_bytes(f_bytes)
    assert_rebuilt(tmp_path, "fg", "built for key")


def test_forged_trailer_is_caught_after_loading(tmp_path):
    # g's library under f's name with a trailer that is right for f: only the key inside the
    # library tells them apart.
    f, g = compile_one(tmp_path, "f"), compile_one(tmp_path, "g")
    library = library_of(g)
    f.write_bytes(library + trailer_for(f.stem, library))
    assert_rebuilt(tmp_path, "f", "is not the library of this graph")


def test_concurrent_processes_compile_the_same_graph(tmp_path):
    env = dict(os.environ, DYNAMIR_CACHE_DIR=str(tmp_path))
    processes = [subprocess.Popen([sys.executable, "-c", SCRIPT, "fg"], env=env,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                 for _ in range(4)]
    for p in processes:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
    # One entry per graph, no temporaries left behind, and both load in the next process.
    assert len(entries(tmp_path)) == 2
    assert not list(tmp_path.glob("*.tmp"))
    assert run(tmp_path, "fg") == ((2, 2), "")
