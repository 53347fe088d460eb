#!/usr/bin/env bash
# Builds llama.cpp's `llama-server` once and prints its path: target/tools/llama-server.
#
#   ./scripts/llama_server.sh            # prints e.g. /path/to/repo/target/tools/llama-server
#
# Cached: when target/tools/llama-server is there (and executable), the script prints it and
# exits at once. Otherwise it builds llama.cpp from PyPI's llama-cpp-python 0.3.36 source
# distribution (which vendors llama.cpp), with cmake and ninja from PyPI, in
# target/tools/llama.cpp-build/:
#   python3 -m venv venv && venv/bin/pip install cmake ninja
#   the sdist's file from PyPI's simple index (its sha256 checked)
#   cmake -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DLLAMA_CURL=OFF -DGGML_NATIVE=ON \
#         -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF      (in vendor/llama.cpp)
#   ninja -C build -j2 llama-server
# and links target/tools/llama-server to build/bin/llama-server (the binary loads the ggml and
# llama shared libraries beside it in build/bin, so it stays where it was built). An interrupted
# build resumes: the download and the unpacked sources are kept, and ninja builds what is left.
#
# Needs a C++ compiler and network access to PyPI. GGML_NATIVE=ON tunes the build to this CPU.
# (`pip download --no-binary :all:` would also build the sdist's build requirements, cmake among
# them, from source just to read its metadata, so the file is fetched directly.) About 6 minutes
# on 2 cores. Progress goes to stderr; stdout is only the binary's path. scripts/local_model_quality.py and
# scripts/local_model_bench.py take it as --llama-server.
set -euo pipefail

VERSION=0.3.36
SHA256=832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TOOLS="$ROOT/target/tools"
BIN="$TOOLS/llama-server"

if [ -x "$BIN" ]; then
    echo "$BIN"
    exit 0
fi

WORK="$TOOLS/llama.cpp-build"
SRC="$WORK/llama_cpp_python-$VERSION"
mkdir -p "$WORK"
cd "$WORK"
{
    echo "building llama-server from llama-cpp-python $VERSION in $WORK"
    [ -x venv/bin/pip ] || python3 -m venv venv
    venv/bin/pip install -q cmake ninja
    if [ ! -f "llama_cpp_python-$VERSION.tar.gz" ]; then
        curl -sSfL -o "llama_cpp_python-$VERSION.tar.gz.part" \
            "https://files.pythonhosted.org/packages/ec/e9/e7de2b0463ea3ffbf0ede6cb21b58c1258a8f6521aae45ca773a59fe7cf3/llama_cpp_python-$VERSION.tar.gz"
        echo "$SHA256  llama_cpp_python-$VERSION.tar.gz.part" | sha256sum -c -
        mv "llama_cpp_python-$VERSION.tar.gz.part" "llama_cpp_python-$VERSION.tar.gz"
    fi
    if [ ! -d "$SRC/vendor/llama.cpp" ]; then
        tar xzf "llama_cpp_python-$VERSION.tar.gz"
    fi
    cd "$SRC/vendor/llama.cpp"
    PATH="$WORK/venv/bin:$PATH" cmake -B build -G Ninja -DCMAKE_BUILD_TYPE=Release \
        -DLLAMA_CURL=OFF -DGGML_NATIVE=ON -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF
    PATH="$WORK/venv/bin:$PATH" ninja -C build -j2 llama-server
} >&2

BUILT="$SRC/vendor/llama.cpp/build/bin/llama-server"
if [ ! -x "$BUILT" ]; then
    echo "error: the build finished without $BUILT" >&2
    exit 1
fi
ln -sfn "$BUILT" "$BIN"
echo "$BIN"
