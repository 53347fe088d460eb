#!/usr/bin/env bash
# Installs the MCP client the MCP server tests (crates/quarry-cli/tests/it/mcp.rs) drive Quarry
# with: the official Python SDK, PyPI package `mcp` (pinned below), into target/python-mcp, and
# prints the directory to put on PYTHONPATH, e.g.
#   export QUARRY_MCP_PYTHONPATH=$(scripts/mcp.sh)
# Idempotent; pip's time limit is $QUARRY_MCP_PIP_TIMEOUT seconds (default 300).
set -euo pipefail
cd "$(dirname "$0")/.."

MCP_VERSION=2.3.0
PIP_TIMEOUT="${QUARRY_MCP_PIP_TIMEOUT:-300}" exec scripts/pip-target.sh mcp "$MCP_VERSION" \
    mcp.client.stdio mcp.client.streamable_http
