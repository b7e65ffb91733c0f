#!/usr/bin/env bash
# Regenerates the dialect and pass references from ODS into docs/generated/.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/build.sh --target mlir-doc >/dev/null
mkdir -p docs/generated
cp build/docs/Dialects/DynDialect.md build/docs/DynPasses.md build/docs/DynConversionPasses.md \
  docs/generated/
echo "docs/generated/ updated"
