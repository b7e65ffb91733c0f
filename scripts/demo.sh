#!/usr/bin/env bash
# The main job: set up, build, and run the seed demo (examples/seed_testnet.py): the forum's
# TestNet and its numpy twin compiled and explained for inputs -1 and +1.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
./scripts/build.sh >/dev/null
exec .venv/bin/python examples/seed_testnet.py
