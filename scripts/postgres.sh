#!/usr/bin/env bash
# Starts a throwaway local PostgreSQL for tests and prints its URL on stdout, e.g.
#   export QUARRY_TEST_POSTGRES_URL=$(scripts/postgres.sh)
# Idempotent: a server this script started earlier (same directory) is reused. Data lives in
# $QUARRY_PG_DIR (default /tmp/quarry-postgres); stop it with
#   pg_ctl -D /tmp/quarry-postgres/data stop   (as the postgres user when run as root).
# Finds initdb and friends on PATH, else in Debian's /usr/lib/postgresql/<major>/bin, else
# installs Debian's postgresql package with apt-get (as root or with passwordless sudo).
# Everything except the URL goes to stderr.
#
#   scripts/postgres.sh --running DIR   exits 0 when a server started in DIR runs
#   scripts/postgres.sh --stop DIR      stops it (a fast shutdown), waiting until it is gone
# work for any server this script started, the pgvector one of scripts/pgvector.sh included.
set -euo pipefail

# The postmaster's process id, from the first line of its pid file (empty when none runs).
postmaster_pid() {
    local pid
    pid=$(head -n1 "$1/data/postmaster.pid" 2>/dev/null) || return 0
    if [ -n "$pid" ] && [ -d "/proc/$pid" ]; then
        echo "$pid"
    fi
}
case "${1:-}" in
    --running)
        [ -n "$(postmaster_pid "$2")" ]
        exit
        ;;
    --stop)
        pid=$(postmaster_pid "$2")
        if [ -n "$pid" ]; then
            kill -INT "$pid"
            for _ in $(seq 1 120); do
                [ -d "/proc/$pid" ] || exit 0
                sleep 0.5
            done
            echo "postgres.sh: the server in $2 (pid $pid) did not stop within 60 s" >&2
            exit 1
        fi
        exit 0
        ;;
esac

dir="${QUARRY_PG_DIR:-/tmp/quarry-postgres}"
database="${QUARRY_PG_DATABASE:-quarry_test}"

# The server and client programs this script runs.
pg_tools=(initdb pg_ctl postgres pg_isready psql)

missing_tools() {
    local tool missing=()
    for tool in "${pg_tools[@]}"; do
        command -v "$tool" >/dev/null 2>&1 || missing+=("$tool")
    done
    echo "${missing[*]}"
}

# Debian keeps the server programs off PATH, in /usr/lib/postgresql/<major>/bin: put the highest
# major that has them in front of PATH (its bin also holds psql and pg_isready).
add_debian_bin_dir() {
    local dir
    while IFS= read -r dir; do
        if [ -x "$dir/initdb" ] && [ -x "$dir/pg_ctl" ] && [ -x "$dir/postgres" ]; then
            echo "postgres.sh: using PostgreSQL from $dir" >&2
            PATH="$dir:$PATH"
            return 0
        fi
    done < <(printf '%s\n' /usr/lib/postgresql/*/bin | sort -rV)
    return 1
}

if [ -n "$(missing_tools)" ]; then
    add_debian_bin_dir || true
fi
if [ -n "$(missing_tools)" ]; then
    # A fresh Debian machine: install the distribution's PostgreSQL (server and client). Its
    # package may start a cluster of its own on port 5432; this script does not use that one.
    sudo=()
    can_install=$([ "$(id -u)" -eq 0 ] && echo yes || echo no)
    if [ "$can_install" = no ] && command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
        sudo=(sudo -n)
        can_install=yes
    fi
    if [ "$can_install" = yes ] && command -v apt-get >/dev/null 2>&1; then
        echo "postgres.sh: $(missing_tools) not found; installing PostgreSQL with apt-get" >&2
        "${sudo[@]}" apt-get update -qq >&2 || true
        "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >&2 || true
        add_debian_bin_dir || true
    fi
fi
if [ -n "$(missing_tools)" ]; then
    echo "postgres.sh: $(missing_tools) not found on PATH or in /usr/lib/postgresql/*/bin;" \
        "install PostgreSQL 15+ (Debian: apt-get install postgresql)" >&2
    exit 1
fi
export PATH

# initdb and postgres refuse to run as root: run them as the postgres user then.
as_pg() {
    if [ "$(id -u)" -eq 0 ]; then
        runuser -u postgres -- "$@"
    else
        "$@"
    fi
}

free_port() {
    local port
    for port in $(seq 55432 55532); do
        if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
            echo "$port"
            return 0
        fi
    done
    echo "postgres.sh: no free port in 55432-55532" >&2
    return 1
}

if [ "$(id -u)" -eq 0 ] && ! id postgres >/dev/null 2>&1; then
    echo "postgres.sh: creating the postgres system user" >&2
    useradd --system --no-create-home --shell /usr/sbin/nologin postgres
fi

mkdir -p "$dir"
if [ "$(id -u)" -eq 0 ]; then
    chown postgres:postgres "$dir"
fi

if [ ! -f "$dir/data/PG_VERSION" ]; then
    echo "postgres.sh: initialising a cluster in $dir/data" >&2
    as_pg initdb -D "$dir/data" -U postgres --auth=trust -E UTF8 --no-locale >"$dir/initdb.log" 2>&1 || {
        cat "$dir/initdb.log" >&2
        exit 1
    }
fi

if [ -f "$dir/port" ] && as_pg pg_ctl -D "$dir/data" status >/dev/null 2>&1; then
    port=$(cat "$dir/port")
    echo "postgres.sh: reusing the server on port $port" >&2
else
    port=$(free_port)
    echo "postgres.sh: starting a server on 127.0.0.1:$port" >&2
    as_pg pg_ctl -D "$dir/data" -l "$dir/log" -w -t 60 \
        -o "-p $port -k $dir -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=300" start >&2 || {
        tail -n 20 "$dir/log" >&2
        exit 1
    }
    echo "$port" | as_pg tee "$dir/port" >/dev/null
fi

for _ in $(seq 1 60); do
    if pg_isready -h 127.0.0.1 -p "$port" -U postgres -q; then
        break
    fi
    sleep 0.5
done
pg_isready -h 127.0.0.1 -p "$port" -U postgres >&2

exists=$(psql -h 127.0.0.1 -p "$port" -U postgres -d postgres -tAc \
    "SELECT 1 FROM pg_database WHERE datname = '$database'")
if [ "$exists" != "1" ]; then
    psql -h 127.0.0.1 -p "$port" -U postgres -d postgres -qc "CREATE DATABASE $database" >&2
fi

echo "postgres://postgres@127.0.0.1:$port/$database"
