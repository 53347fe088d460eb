#!/usr/bin/env bash
# Builds and tests the Python package (bindings/python): a virtual environment in
# target/python-bindings with pinned maturin, pytest and pydantic from PyPI; the package's
# module from the workspace's own debug build (bindings/python is a workspace member, so the
# test build already compiled it with the same dependencies), laid out with the Python sources
# in target/python-package as a wheel lays it out, instead of a second, release, build of
# everything; the scripted model server the extractor tests talk to; then pytest. Arguments go
# to pytest. `--setup` only makes the virtual environment. QUARRY_PYTHON_PROFILE=release installs
# the package as a user does (`pip install ./bindings/python`: maturin, release). Idempotent.
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

# The module (quarry-python's cdylib) and the scripted model server, from the workspace's own
# build: `cargo test --workspace` compiled both with the same dependencies already.
cargo build --locked --workspace
export QUARRY_SCRIPTED_SERVER="$root/target/debug/scripted-model-server"

if [ "${QUARRY_PYTHON_PROFILE:-dev}" = dev ]; then
    # The package as a wheel lays it out: the Python sources and the module beside them.
    stage="$root/target/python-package"
    rm -rf "$stage"
    mkdir -p "$stage"
    cp -r bindings/python/python/quarry "$stage/quarry"
    cp "$root/target/debug/lib_native.so" "$stage/quarry/_native.abi3.so"
    export PYTHONPATH="$stage${PYTHONPATH:+:$PYTHONPATH}"
else
    # As a user installs it: maturin's release build (its own dependency features), then pip.
    # maturin is found on PATH by its build backend; the build isolation pip would set up needs
    # the network, so the pinned maturin above builds it.
    PATH="$venv/bin:$PATH" CARGO_TARGET_DIR="$root/target" \
        "$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
        --no-build-isolation --force-reinstall --no-deps ./bindings/python
fi

cd bindings/python
exec "$venv/bin/python" -m pytest -q -p no:cacheprovider tests "$@"
