#!/usr/bin/env bash
# Installs schemathesis (PyPI, pinned below), the schema-driven fuzzer the OpenAPI conformance
# test (crates/quarry-cli/tests/it/schemathesis.rs) runs against `quarry serve`, into
# target/python-schemathesis, and prints the directory to put on PYTHONPATH, e.g.
#   export QUARRY_SCHEMATHESIS_PYTHONPATH=$(scripts/schemathesis.sh)
# Idempotent; pip's time limit is $QUARRY_SCHEMATHESIS_PIP_TIMEOUT seconds (default 300).
set -euo pipefail
cd "$(dirname "$0")/.."

SCHEMATHESIS_VERSION=4.32.5
PIP_TIMEOUT="${QUARRY_SCHEMATHESIS_PIP_TIMEOUT:-300}" exec scripts/pip-target.sh schemathesis \
    "$SCHEMATHESIS_VERSION" schemathesis.cli
