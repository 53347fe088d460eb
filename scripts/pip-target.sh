#!/usr/bin/env bash
# Installs one pinned PyPI package (with its dependencies) into target/python-NAME/NAME-VERSION,
# not into the user's Python, and prints that directory (for PYTHONPATH) on stdout:
#   scripts/pip-target.sh NAME VERSION MODULE...
# MODULE... are imported to check the install; a copy that imports them is reused. Everything but
# the path goes to stderr. Exits non-zero when pip cannot install it within $PIP_TIMEOUT seconds
# (default 300) or the modules do not import afterwards.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "$#" -lt 3 ]; then
    echo "usage: scripts/pip-target.sh NAME VERSION MODULE..." >&2
    exit 2
fi
name=$1 version=$2
shift 2
imports="import $(IFS=,; echo "$*")"
dir="$(pwd)/target/python-$name/$name-$version"

if ! PYTHONPATH="$dir" python3 -c "$imports" >/dev/null 2>&1; then
    echo "pip-target.sh: installing $name $version into $dir" >&2
    rm -rf "$dir"
    timeout "${PIP_TIMEOUT:-300}" python3 -m pip install --quiet --disable-pip-version-check \
        --target "$dir" "$name==$version" >&2
fi
PYTHONPATH="$dir" python3 -c "$imports" >&2
echo "$dir"
