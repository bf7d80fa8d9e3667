#!/usr/bin/env bash
# Soak run (tests/soak/soak.py): `make soak SOAK_SECONDS=600`; `make test` runs
# a short one. Needs build/ (moat-flood) and build-asan/ (the gateway).
set -euo pipefail
cd "$(dirname "$0")/../.."
exec .venv/bin/python tests/soak/soak.py --seconds "${1:-60}"
