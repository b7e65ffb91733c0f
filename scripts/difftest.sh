#!/usr/bin/env bash
# Runs the differential tester (tools/difftest) for MINUTES minutes with fresh seeds:
#   ./scripts/difftest.sh MINUTES [extra difftest.py args, e.g. --lib torch --jobs 1]
# Prints the seeds it runs, each failing program, and the summary line; the report goes to
# build/difftest-<time>/ unless --out is given. Exit status 1 when a program fails.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -lt 1 ]; then
  echo "usage: $0 MINUTES [extra difftest.py args]" >&2
  exit 2
fi
minutes=$1
shift
seed=$(( $(date +%s) % 1000000 * 1000 ))
out=build/difftest-$(date +%Y%m%d-%H%M%S)
case " $* " in *" --out "*) out_args=() ;; *) out_args=(--out "$out") ;; esac
echo "difftest: ${minutes} min, first seed ${seed} (each seed is --count programs, default 100)"
exec .venv/bin/python tools/difftest/difftest.py --minutes "$minutes" --seed "$seed" \
  "${out_args[@]}" "$@"
