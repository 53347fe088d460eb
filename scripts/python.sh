#!/usr/bin/env bash
# Builds and tests the Python package (bindings/python): a virtual environment in
# target/python-bindings with pinned maturin, pytest and pydantic from PyPI; the package
# installed the way a user installs it (`pip install ./bindings/python`), built with the dev
# profile into the workspace's target/, so that it reuses the dependencies the workspace's test
# build compiled (the optimised ones: candle, gemm, llguidance... through .cargo/config.toml's
# profile) instead of a second, release, build of everything; the scripted model server the
# extractor tests talk to; then pytest. Arguments go to pytest. `--setup` only makes the virtual
# environment. QUARRY_PYTHON_PROFILE=release builds as a user's pip does. Idempotent; a rebuild
# is incremental.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

MATURIN_VERSION=1.16.0
PYTEST_VERSION=8.3.4
PYDANTIC_VERSION=2.10.6

venv="$root/target/python-bindings"
if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
fi
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
    "maturin==$MATURIN_VERSION" "pytest==$PYTEST_VERSION" "pydantic==$PYDANTIC_VERSION"
if [ "${1:-}" = --setup ]; then
    exit 0
fi

cargo build --locked -p quarry-testkit --bin scripted-model-server
export QUARRY_SCRIPTED_SERVER="$root/target/debug/scripted-model-server"

# maturin is found on PATH by its build backend; the build isolation pip would set up needs the
# network, so the pinned maturin above builds it.
PATH="$venv/bin:$PATH" CARGO_TARGET_DIR="$root/target" \
    MATURIN_PEP517_ARGS="--profile ${QUARRY_PYTHON_PROFILE:-dev}" \
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
    --no-build-isolation --force-reinstall --no-deps ./bindings/python

cd bindings/python
exec "$venv/bin/python" -m pytest -q -p no:cacheprovider tests "$@"
