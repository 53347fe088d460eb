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
#   venv/bin/pip download --no-deps --no-binary :all: llama-cpp-python==0.3.36
#   cmake -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DLLAMA_CURL=OFF -DGGML_NATIVE=ON \
#         -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF      (in vendor/llama.cpp)
#   ninja -C build llama-server
# and links target/tools/llama-server to build/bin/llama-server (the binary loads the ggml and
# llama shared libraries beside it in build/bin, so it stays where it was built). An interrupted
# build resumes: the download and the unpacked sources are kept, and ninja builds what is left.
#
# Needs a C++ compiler and network access to PyPI. GGML_NATIVE=ON tunes the build to this CPU.
# `pip download --no-binary :all:` also builds the sdist's build requirements (cmake among them)
# from source to read its metadata, which takes a while on a small machine. Progress goes to
# stderr; stdout is only the binary's path. scripts/local_model_quality.py and
# scripts/local_model_bench.py take it as --llama-server.
set -euo pipefail

VERSION=0.3.36
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
        venv/bin/pip download -q --no-deps --no-binary :all: "llama-cpp-python==$VERSION" -d .
    fi
    if [ ! -d "$SRC/vendor/llama.cpp" ]; then
        tar xzf "llama_cpp_python-$VERSION.tar.gz"
    fi
    cd "$SRC/vendor/llama.cpp"
    PATH="$WORK/venv/bin:$PATH" cmake -B build -G Ninja -DCMAKE_BUILD_TYPE=Release \
        -DLLAMA_CURL=OFF -DGGML_NATIVE=ON -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF
    PATH="$WORK/venv/bin:$PATH" ninja -C build llama-server
} >&2

BUILT="$SRC/vendor/llama.cpp/build/bin/llama-server"
if [ ! -x "$BUILT" ]; then
    echo "error: the build finished without $BUILT" >&2
    exit 1
fi
ln -sfn "$BUILT" "$BIN"
echo "$BIN"
