#!/usr/bin/env bash
# Installs the MCP client the MCP server tests (crates/quarry-cli/tests/mcp.rs) drive Quarry
# with: the official Python SDK, PyPI package `mcp` (pinned below), into target/python-mcp, not
# into the user's Python. Prints the directory to put on PYTHONPATH on stdout, e.g.
#   export QUARRY_MCP_PYTHONPATH=$(scripts/mcp.sh)
# Idempotent (an installed copy is reused); everything but the path goes to stderr. Exits
# non-zero when pip cannot install it within $QUARRY_MCP_PIP_TIMEOUT seconds (default 300).
set -euo pipefail
cd "$(dirname "$0")/.."

MCP_VERSION=2.3.0
dir="$(pwd)/target/python-mcp/mcp-$MCP_VERSION"
pip_timeout="${QUARRY_MCP_PIP_TIMEOUT:-300}"

if ! PYTHONPATH="$dir" python3 -c "import mcp.client.stdio, mcp.client.streamable_http" >/dev/null 2>&1; then
    echo "mcp.sh: installing mcp $MCP_VERSION into $dir" >&2
    rm -rf "$dir"
    timeout "$pip_timeout" python3 -m pip install --quiet --disable-pip-version-check \
        --target "$dir" "mcp==$MCP_VERSION" >&2
fi
PYTHONPATH="$dir" python3 -c "import mcp.client.stdio, mcp.client.streamable_http" >&2
echo "$dir"
