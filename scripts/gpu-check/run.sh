#!/bin/sh
# The prepared GPU check, run on the GPU machine from the bundle folder (see docs/gpu.md):
# Dynamir's compiled graphs checked against numpy and timed, then torch eager and torch.compile
# on the same shapes. Results go to the folder given (default: $OUT).
out=${1:-$OUT}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
status=0
echo "== dynamir (compiled graphs, dynamir-gpu-run)"
"$here/dynamir-gpu-run" "$here" "$out/dynamir.json" 2>&1 | tee "$out/dynamir.txt" || status=1
echo "== torch eager and torch.compile"
python3 "$here/torch_peer.py" "$out/torch.json" 2>&1 | tee "$out/torch.txt" || status=1
exit $status
