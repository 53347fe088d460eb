#!/usr/bin/env bash
# Installs schemathesis (PyPI, pinned below), the schema-driven fuzzer the OpenAPI conformance
# test (crates/quarry-cli/tests/schemathesis.rs) runs against `quarry serve`, into
# target/python-schemathesis, not into the user's Python. Prints the directory to put on
# PYTHONPATH on stdout, e.g.
#   export QUARRY_SCHEMATHESIS_PYTHONPATH=$(scripts/schemathesis.sh)
# Idempotent (an installed copy is reused); everything but the path goes to stderr. Exits
# non-zero when pip cannot install it within $QUARRY_SCHEMATHESIS_PIP_TIMEOUT seconds (default
# 300).
set -euo pipefail
cd "$(dirname "$0")/.."

SCHEMATHESIS_VERSION=4.32.5
dir="$(pwd)/target/python-schemathesis/schemathesis-$SCHEMATHESIS_VERSION"
pip_timeout="${QUARRY_SCHEMATHESIS_PIP_TIMEOUT:-300}"

if ! PYTHONPATH="$dir" python3 -c "import schemathesis.cli" >/dev/null 2>&1; then
    echo "schemathesis.sh: installing schemathesis $SCHEMATHESIS_VERSION into $dir" >&2
    rm -rf "$dir"
    timeout "$pip_timeout" python3 -m pip install --quiet --disable-pip-version-check \
        --target "$dir" "schemathesis==$SCHEMATHESIS_VERSION" >&2
fi
PYTHONPATH="$dir" python3 -c "import schemathesis.cli" >&2
echo "$dir"
