#!/usr/bin/env bash
# Runs Quarry's whole test suite on a fresh machine: checks the toolchain and formatting; starts
# the installs the tests need (scripts/test-setup.sh: databases, model files, Chromium, Python
# packages, wasm-bindgen) in the background; builds every target once with clippy as the
# workspace's compiler wrapper (the lint and the test build are one compilation); checks
# dependency directions and the wasm32 build; then runs every test (unit, the real binary, the
# real HTTP server on loopback, the browser package in Node and Chromium, the quality floor on
# crates/quarry-eval/data/dev, the release-size linear-time run, the Python package). Prints how
# long each step took at the end. Idempotent; safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p target

# Each step's start, for the breakdown printed at the end.
step_names=()
step_starts=()
step() {
    step_names+=("$*")
    step_starts+=("$SECONDS")
    printf '\n==> %s (%ss)\n' "$*" "$SECONDS"
}
breakdown() {
    local i end
    printf '\n==> time per step (total %ss)\n' "$SECONDS" >&2
    for i in "${!step_names[@]}"; do
        end=${step_starts[$((i + 1))]:-$SECONDS}
        printf '%6ss  %s\n' "$((end - ${step_starts[$i]}))" "${step_names[$i]}" >&2
    done
}

# The database servers this run starts are stopped when it ends, however it ends, unless
# QUARRY_KEEP_SERVERS=1 (a later run reuses them then). Servers it found running are left alone.
started_servers=()
stop_started_servers() {
    local dir
    for dir in "${started_servers[@]:-}"; do
        [ -n "$dir" ] || continue
        echo "stopping the PostgreSQL server in $dir (QUARRY_KEEP_SERVERS=1 keeps it)" >&2
        scripts/postgres.sh --stop "$dir" || true
    done
}
setup_pid=
setup_env=target/test-setup.env
setup_log=target/test-setup.log
# A previous run's values (and servers) are not this run's.
rm -f "$setup_env"
setup_loaded=0
# Takes what the setup has provided so far (values, servers it started), once.
load_setup_env() {
    if [ "$setup_loaded" = 0 ] && [ -f "$setup_env" ]; then
        setup_loaded=1
        # shellcheck source=/dev/null
        source "$setup_env"
    fi
}
# At exit, however it comes: the background setup is waited for (never left half-way through an
# install), the servers it started are stopped (unless QUARRY_KEEP_SERVERS=1), and the time per
# step is printed.
on_exit() {
    if [ -n "$setup_pid" ]; then
        wait "$setup_pid" 2>/dev/null || true
    fi
    load_setup_env
    if [ "${QUARRY_KEEP_SERVERS:-0}" != 1 ]; then
        stop_started_servers
    fi
    breakdown
}
trap on_exit EXIT

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

step "format"
cargo fmt --all -- --check

step "start the installs in the background (log: $setup_log)"
scripts/test-setup.sh "$setup_env" >"$setup_log" 2>&1 &
setup_pid=$!

step "lint and build: every target, clippy as the workspace's compiler wrapper"
# clippy-driver compiles as rustc does and lints the workspace's crates on the way (cargo passes
# it only those), so one build serves both the lint and the tests: `cargo clippy` would check
# every dependency a second time. CLIPPY_ARGS is how `cargo clippy -- -D warnings` hands its
# arguments to the driver. The Python package's crate (a workspace member, not a default one)
# is built and linted here too.
RUSTC_WORKSPACE_WRAPPER=$(rustup which clippy-driver 2>/dev/null || command -v clippy-driver)
export RUSTC_WORKSPACE_WRAPPER
export CLIPPY_ARGS="-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__"
# CLIPPY_ARGS is clippy's own interface, not a documented one: make sure the driver still reads
# it, by building a crate with one clippy warning, which -D warnings must turn into an error.
probe=target/clippy-probe
rm -rf "$probe"
mkdir -p "$probe/src"
printf '[package]\nname = "clippy-probe"\nversion = "0.0.0"\nedition = "2024"\n[workspace]\n' \
    >"$probe/Cargo.toml"
printf 'pub fn length(values: &Vec<i32>) -> usize {\n    values.len()\n}\n' >"$probe/src/lib.rs"
if probe_output=$(cargo build --quiet --manifest-path "$probe/Cargo.toml" 2>&1) ||
    ! grep -q 'ptr.arg' <<<"$probe_output"; then
    echo "$probe_output" >&2
    echo "clippy-driver no longer denies warnings through CLIPPY_ARGS: fix this step" >&2
    exit 1
fi
cargo test --workspace --all-targets --locked --no-run

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
# Inside a crate, no circle of files that use each other's items (each helper lives in the
# module that owns it).
python3 scripts/file_cycles.py >/dev/null || {
    python3 scripts/file_cycles.py >&2
    echo "circles of files inside a crate (above): move each helper to the module that owns it" >&2
    exit 1
}

step "wait for the installs (scripts/test-setup.sh)"
if ! wait "$setup_pid"; then
    setup_pid=
    cat "$setup_log" >&2
    echo "the installs the tests need failed (the log above, also in $setup_log)" >&2
    exit 1
fi
setup_pid=
cat "$setup_log"
load_setup_env

step "wasm32 build of the pure crates"
if rustup target list --installed 2>/dev/null | grep -q '^wasm32-unknown-unknown$'; then
    cargo check --locked --target wasm32-unknown-unknown -p quarry-core -p quarry-detect -p quarry-parse
else
    echo "SKIPPED: the wasm32-unknown-unknown target could not be installed on this machine"
fi

step "browser package: build the WebAssembly, then test it in Node and in headless Chromium"
scripts/wasm.sh
node --test packages/quarry/test/*.test.mjs

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
if ! cargo test --release --locked -p quarry-detect --test linear_time; then
    failed+=("--release -p quarry-detect --test linear_time")
fi

step "the Python package: its module from the build above, then pytest"
if ! scripts/python.sh; then
    failed+=("(the Python package's pytest suite: scripts/python.sh)")
fi

if [ "${#failed[@]}" -gt 0 ]; then
    printf '\n==> FAILED: %d test binaries\n' "${#failed[@]}" >&2
    printf '    cargo test %s\n' "${failed[@]}" >&2
    exit 1
fi
step "all tests passed"
