"""Assembles every .ptx file in a folder with ptxas for a GPU and prints ptxas' resource report
(one "== <file>" header per kernel module); exits non-zero if any fails."""

import pathlib
import subprocess
import sys

ptxas, arch, folder = sys.argv[1], sys.argv[2], pathlib.Path(sys.argv[3])
files = sorted(folder.glob("*.ptx"))
if not files:
    sys.exit(f"no .ptx files in {folder}")
for ptx in files:
    print(f"== {ptx.name}")
    done = subprocess.run([ptxas, f"-arch={arch}", "-v", str(ptx), "-o", str(ptx.with_suffix(".cubin"))],
                          capture_output=True, text=True)
    print(done.stdout + done.stderr, end="")
    if done.returncode:
        sys.exit(done.returncode)
