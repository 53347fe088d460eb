#!/usr/bin/env bash
# Builds the browser package's WebAssembly into packages/quarry/dist/ (gitignored):
#   quarry_wasm.js, quarry_wasm_bg.wasm  the module without entity data, and wasm-bindgen's glue
#   entity_data.bin                      the entity data (gazetteer table), loaded separately
# Needs the wasm32-unknown-unknown target (added with rustup when missing) and the wasm-bindgen CLI
# at the exact version of the wasm-bindgen crate in Cargo.lock, installed once (a debug build:
# about 2 minutes of CPU, where a release build takes 7, and it converts the module in seconds)
# under $QUARRY_TOOLS_DIR (default ~/.cache/quarry-tools, outside the clone so that a new clone
# on the same machine reuses it). `scripts/wasm.sh --tools` only installs the target and the CLI.
# No wasm-opt: `wasm-opt -Oz` (npm binaryen 132) made the module 7 % smaller raw but not smaller
# gzipped (0.905 MB against 0.903 MB), for 45 s of CPU. Idempotent; progress goes to stderr.
set -euo pipefail
cd "$(dirname "$0")/.."

package=packages/quarry
dist=$package/dist

if ! rustup target list --installed 2>/dev/null | grep -q '^wasm32-unknown-unknown$'; then
    echo "wasm.sh: adding the wasm32-unknown-unknown target" >&2
    rustup target add wasm32-unknown-unknown >&2
fi

# The crate and the CLI must be the same version: the glue and the module speak one protocol.
version=$(awk '/^name = "wasm-bindgen"$/ { getline; gsub(/version = |"/, ""); print; exit }' Cargo.lock)
if [ -z "$version" ]; then
    echo "wasm.sh: no wasm-bindgen in Cargo.lock" >&2
    exit 1
fi
tools="${QUARRY_TOOLS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/quarry-tools}/wasm-bindgen-$version"
bindgen="$tools/bin/wasm-bindgen"
if [ ! -x "$bindgen" ]; then
    echo "wasm.sh: installing wasm-bindgen-cli $version into $tools (about 2 minutes)" >&2
    cargo install --debug wasm-bindgen-cli --version "$version" --root "$tools" >&2
fi
if [ "${1:-}" = --tools ]; then
    exit 0
fi

echo "wasm.sh: building quarry-wasm for wasm32-unknown-unknown" >&2
# The build's messages name quarry-detect's build-script output folder, where entity_data.bin is.
messages=$(cargo build --release --locked --target wasm32-unknown-unknown -p quarry-wasm \
    --message-format=json-render-diagnostics)
# The same messages name the module itself, wherever CARGO_TARGET_DIR puts it.
read -r out_dir module < <(printf '%s\n' "$messages" | node -e '
    const messages = require("fs").readFileSync(0, "utf8").split("\n").filter(Boolean)
        .map((line) => JSON.parse(line));
    const run = messages.find((m) =>
        m.reason === "build-script-executed" && /[/#]quarry-detect#/.test(m.package_id));
    const artifact = messages.find((m) =>
        m.reason === "compiler-artifact" && m.target.name === "quarry_wasm");
    const wasm = artifact && artifact.filenames.find((f) => f.endsWith(".wasm"));
    console.log(run ? run.out_dir : "-", wasm || "-");')
if [ ! -f "$out_dir/entity_data.bin" ]; then
    echo "wasm.sh: the build did not report quarry-detect's entity_data.bin" >&2
    exit 1
fi
if [ ! -f "$module" ]; then
    echo "wasm.sh: the build did not report quarry_wasm.wasm" >&2
    exit 1
fi

rm -rf "$dist"
mkdir -p "$dist"
"$bindgen" --target web --out-dir "$dist" --out-name quarry_wasm \
    --remove-name-section --remove-producers-section \
    "$module"
cp "$out_dir/entity_data.bin" "$dist/entity_data.bin"

for file in quarry_wasm_bg.wasm entity_data.bin; do
    printf 'wasm.sh: %s %s bytes, %s gzipped\n' "$dist/$file" "$(wc -c <"$dist/$file")" \
        "$(gzip -9c "$dist/$file" | wc -c)" >&2
done
