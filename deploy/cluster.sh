#!/usr/bin/env bash
# deploy/cluster.sh: todoflow's production topology on one machine, from real parts.
#
#   deploy/cluster.sh up DIR                 start a cluster whose files live in DIR; the
#                                            last line of output is TEMPORAL_ADDRESS=HOST:PORT
#   deploy/cluster.sh down DIR               stop everything it started
#   deploy/cluster.sh restart DIR SERVICE    SIGKILL one service (frontend, history,
#                                            matching, worker or postgres), start it again
#   deploy/cluster.sh build                  only build (or find) the binaries
#
# What runs: PostgreSQL (Debian's packages; installed with apt-get when missing), its two
# databases set up with temporal-sql-tool, and temporal-server as four processes
# (frontend, history with 4 shards, matching with 2 task-queue partitions, worker) with SQL
# visibility on PostgreSQL (postgres12 plugin); then the `default` namespace and todoflow's
# search attributes, created with the stock `temporal` CLI. The server's configuration is
# deploy/temporal/todoflow.yaml and dynamicconfig.yaml, the files docker-compose.yml runs.
#
# temporal-server and temporal-sql-tool are go.temporal.io/server v1.29.1 (the server the
# dev server embeds), built from tools/go.mod once per machine into
# ~/.cache/todoflow/temporal-server-v1.29.1/ under a file lock. With Go's build cache cold
# that takes 3-4 minutes and 1.5 GB of memory on 2 cores (measured; the modules already
# downloaded), about 15 s once the dev server's CLI has been built (they share most packages).
#
# Ports: ten in a row from a random free base between 20000 and 32000, or from
# TODOFLOW_CLUSTER_PORT_BASE (postgres, then frontend gRPC, HTTP and membership, history
# gRPC and membership, matching, worker); DIR/cluster.env records them and the rest of
# the cluster's settings for down and restart. Logs are in DIR/logs.
#
# DIR is trusted only as far as no one else can have written it: a missing DIR is created
# with mode 0700; an existing one must belong to the invoking user, with no write bit for
# group or others, and every folder above it to root or that user, writable by no one else
# (sticky ones such as /tmp aside), else every command refuses it. cluster.env is parsed
# as NAME=VALUE lines with known names and plain values, never run; a pid file's process is
# signalled only when its command line (/proc/PID/cmdline) is the one this script started;
# no chown follows a link.
#
# PostgreSQL's bootstrap superuser is an admin role (ADMIN_USER) used only to set up the
# `temporal` role, a non-superuser that owns the temporal and temporal_visibility
# databases and is the one the server connects as. Passwords reach the tools through their
# environment (PGPASSWORD, SQL_PASSWORD) or a pipe, never a command line, which every local
# user can read in /proc; the server reads its password from its environment (the template
# deploy/temporal/todoflow.yaml renders it in memory), which only its own user can read.
#
# Run as root (as CI does), PostgreSQL runs as the `postgres` user (created when missing),
# since initdb refuses root; DIR's group then becomes that user's, with search only (0710),
# and every folder above DIR must be searchable by others.
# With TODOFLOW_CLUSTER_OWNER_PID set, `up` leaves a watchdog that runs `down` once that
# process is gone (the end-to-end test sets it, so a killed test leaves nothing running).
# With TODOFLOW_CLUSTER_DYNAMIC_CONFIG=FILE, `up` adds FILE's settings (dynamic config YAML,
# keys that dynamicconfig.yaml does not set) to the cluster's copy, for this cluster only.
#
# Exit codes: 0 done, 1 failed (the reason and the log lines that tell it on stderr), 2 bad
# arguments, 3 this machine cannot run a cluster (PostgreSQL cannot be installed, no Go to
# build the server with).
#
# The cluster's settings are plain variables, written to cluster.env by name (write_env):
# shellcheck disable=SC2034
set -euo pipefail

server_version=v1.29.1
cli_version=v1.5.1
# todoflow's search attributes (workflows.SearchAttributes; testsuite checks they agree).
search_attributes=(TodoTotal=Int TodoCompleted=Int TodoCurrent=Keyword AgentStatus=Keyword)
services=(frontend history matching worker)

self=$(readlink -f "${BASH_SOURCE[0]}")
here=$(dirname "$self")
root=$(dirname "$here")
cache_root="${XDG_CACHE_HOME:-$HOME/.cache}/todoflow"
server_cache="$cache_root/temporal-server-$server_version"
server_bin="$server_cache/temporal-server"
sql_tool="$server_cache/temporal-sql-tool"
schema_dir="$server_cache/schema/postgresql/v12"

say() { printf 'cluster: %s\n' "$*"; }
die() {
  printf 'cluster: %s\n' "$*" >&2
  exit 1
}
# unable REASON: this machine lacks what a cluster needs (exit 3).
unable() {
  printf 'cluster: %s\n' "$*" >&2
  exit 3
}
usage() {
  sed -n '4,9p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
  exit 2
}
elapsed() { local s=$(($(date +%s) - $1)); printf '%dm%02ds' $((s / 60)) $((s % 60)); }

# with_lock FILE CMD...: runs CMD holding an exclusive flock on FILE (the lock is released
# before anything long-lived starts, so no server inherits it).
lock_fd=
with_lock() {
  local file=$1
  shift
  exec {lock_fd}>"$file"
  if command -v flock >/dev/null; then flock "$lock_fd"; fi
  "$@" # not in an || list, so that set -e stops CMD at its first failure
  exec {lock_fd}>&-
  lock_fd=
}

# go_build OUT PKG: builds PKG from tools/go.mod into OUT, with a line every 30 s.
go_build() {
  local out=$1 pkg=$2 start ticker rc=0
  start=$(date +%s)
  # (The ticker lets go of the lock: its last sleep outlives it.)
  (
    [ -z "$lock_fd" ] || exec {lock_fd}>&-
    while sleep 30 && kill -0 $$ 2>/dev/null; do say "  still building $(basename "$out") ($(elapsed "$start"))"; done
  ) &
  ticker=$!
  (cd "$root" && GOWORK=off go build -modfile=tools/go.mod -o "$out" "$pkg") || rc=$?
  kill "$ticker" 2>/dev/null || true
  wait "$ticker" 2>/dev/null || true
  [ "$rc" = 0 ] || die "go build $pkg failed (exit $rc)"
  say "built $(basename "$out") in $(elapsed "$start")"
}

server_built() { [ -x "$server_bin" ] && [ -x "$sql_tool" ] && [ -f "$schema_dir/version.go" ]; }

build_server_locked() {
  if server_built; then
    say "temporal-server $server_version: built meanwhile by another process"
    return
  fi
  grep -q "go.temporal.io/server $server_version" "$root/tools/go.mod" ||
    die "tools/go.mod does not pin go.temporal.io/server $server_version; update deploy/cluster.sh"
  command -v go >/dev/null || unable "go is not on PATH; it builds temporal-server from tools/go.mod"
  say "building temporal-server and temporal-sql-tool $server_version from tools/go.mod into $server_cache"
  say "(3-4 minutes and 1.5 GB of memory on 2 cores when Go's build cache is cold; once per machine)"
  local tmp moddir
  tmp=$(mktemp -d "$server_cache/build.XXXXXX")
  go_build "$tmp/temporal-sql-tool" go.temporal.io/server/cmd/tools/sql
  go_build "$tmp/temporal-server" go.temporal.io/server/cmd/server
  "$tmp/temporal-server" --version | grep -q "${server_version#v}" ||
    die "the built temporal-server is not $server_version: $("$tmp/temporal-server" --version)"
  # The schema files temporal-sql-tool applies, from the same module version.
  moddir=$(cd "$root" && GOWORK=off go list -modfile=tools/go.mod -m -f '{{.Dir}}' go.temporal.io/server)
  [ -f "$moddir/schema/postgresql/v12/version.go" ] || die "no PostgreSQL schema in $moddir"
  mkdir -p "$tmp/schema"
  cp -r "$moddir/schema/postgresql" "$tmp/schema/"
  chmod -R u+w "$tmp/schema"
  # Schema and tool first, the server last: its presence says the build is complete.
  rm -rf "$server_cache/schema"
  mv "$tmp/schema" "$server_cache/schema"
  mv -f "$tmp/temporal-sql-tool" "$sql_tool"
  mv -f "$tmp/temporal-server" "$server_bin"
  rm -rf "$tmp"
}

build_server() {
  if server_built; then return; fi
  mkdir -p "$server_cache"
  with_lock "$server_cache/build.lock" build_server_locked
}

# The stock Temporal CLI: $TODOFLOW_TEMPORAL_CLI, else the dev server's build (the same
# cache path, lock and build as worker/devserver and .ci/run).
cli_dir="$cache_root/temporal-cli-$cli_version"
cli_bin="$cli_dir/temporal"
build_cli_locked() {
  if [ -x "$cli_bin" ]; then return; fi
  say "building the temporal CLI $cli_version from tools/go.mod into $cli_dir (about 7 minutes, once per machine)"
  go_build "$cli_bin.tmp.$$" github.com/temporalio/cli/cmd/temporal
  mv -f "$cli_bin.tmp.$$" "$cli_bin"
}
find_cli() {
  if [ -n "${TODOFLOW_TEMPORAL_CLI:-}" ]; then
    cli_bin=$TODOFLOW_TEMPORAL_CLI
    [ -x "$cli_bin" ] || die "TODOFLOW_TEMPORAL_CLI=$cli_bin is not an executable"
    return
  fi
  if [ ! -x "$cli_bin" ]; then
    mkdir -p "$cli_dir"
    with_lock "$cli_dir/build.lock" build_cli_locked
  fi
}

# temporal ARGS...: the CLI against this cluster only (the caller's TEMPORAL_* variables
# and config file, meant for some other server, are left out).
temporal() {
  "$cli_bin" --address "$TEMPORAL_ADDRESS" --disable-config-file --disable-config-env \
    --command-timeout 20s "$@"
}

# ---- PostgreSQL ----

pg_bindir() {
  local d
  for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
    if [ -x "$d/initdb" ] && [ -x "$d/pg_ctl" ]; then
      echo "$d"
      return
    fi
  done
  if command -v initdb >/dev/null && command -v pg_ctl >/dev/null; then
    dirname "$(readlink -f "$(command -v initdb)")"
    return
  fi
  return 1
}

ensure_postgres() {
  if PG_BIN=$(pg_bindir); then return; fi
  local sudo=()
  if [ "$(id -u)" != 0 ]; then
    command -v sudo >/dev/null || unable "PostgreSQL is not installed and this user cannot install it: apt-get install postgresql"
    sudo=(sudo)
  fi
  command -v apt-get >/dev/null || unable "PostgreSQL is not installed and there is no apt-get: install PostgreSQL (initdb, pg_ctl)"
  say "installing PostgreSQL from Debian's packages (apt-get install postgresql)"
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get update -q >&2 ||
    unable "apt-get update failed: PostgreSQL cannot be installed"
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -q postgresql >&2 ||
    unable "apt-get install postgresql failed: PostgreSQL cannot be installed"
  PG_BIN=$(pg_bindir) || unable "PostgreSQL was installed but no initdb was found under /usr/lib/postgresql"
}

# PostgreSQL's server refuses to run as root: as root, it runs as PG_USER.
choose_pg_user() {
  PG_USER=
  [ "$(id -u)" = 0 ] || return 0
  PG_USER=postgres
  if ! id "$PG_USER" >/dev/null 2>&1; then
    say "creating the system user $PG_USER to run PostgreSQL (initdb refuses root)"
    useradd --system --home-dir /nonexistent --no-create-home --shell /usr/sbin/nologin "$PG_USER" ||
      unable "cannot create the user $PG_USER to run PostgreSQL as"
  fi
}

# as_pg CMD...: runs CMD as PostgreSQL's user.
as_pg() {
  if [ -n "${PG_USER:-}" ]; then
    (cd / && runuser -u "$PG_USER" -- "$@")
  else
    "$@"
  fi
}

pg_data() { echo "$dir/postgres/data"; }
pg_pid() { [ -f "$(pg_data)/postmaster.pid" ] && head -1 "$(pg_data)/postmaster.pid"; }

init_postgres() {
  local data
  data=$(pg_data)
  # DIR/postgres belongs to PostgreSQL's user, who may write in it: what this script does
  # there as root it does as that user, so that a link made there leads nowhere root can go.
  mkdir -p "$dir/postgres"
  if [ -n "$PG_USER" ]; then
    chown -h "$PG_USER" "$dir/postgres"
    as_pg test -w "$dir/postgres" ||
      die "$PG_USER cannot write $dir/postgres: every folder above it must be searchable by others (chmod o+x)"
  fi
  [ -f "$data/PG_VERSION" ] && return
  say "initdb $data (PostgreSQL $("$PG_BIN/postgres" --version | awk '{print $3}'), as ${PG_USER:-$(id -un)})"
  # The admin's password through a pipe that initdb's side opens (<(cat), as its own user):
  # neither a command line nor a file.
  # shellcheck disable=SC2016 # expanded by that bash
  printf '%s\n' "$ADMIN_PWD" | as_pg bash -c 'exec "$0" "$@" --pwfile=<(cat)' \
    "$PG_BIN/initdb" -D "$data" -U "$ADMIN_USER" -A scram-sha-256 -E UTF8 --no-locale \
    >"$dir/logs/initdb.log" 2>&1 || {
    tail -20 "$dir/logs/initdb.log" >&2
    die "initdb failed (log: $dir/logs/initdb.log)"
  }
  # TCP on the loopback only; no Unix socket (DIR may be longer than a socket path may be).
  # Four server processes hold up to 30 connections each.
  as_pg tee -a "$data/postgresql.conf" >/dev/null <<'EOF'

# deploy/cluster.sh
listen_addresses = '127.0.0.1'
unix_socket_directories = ''
max_connections = 200
EOF
}

start_postgres() {
  local n=0
  # After a SIGKILL the old backends can hold the shared memory for a moment: retry.
  until as_pg "$PG_BIN/pg_ctl" -D "$(pg_data)" -l "$dir/postgres/postgres.log" -o "-p $PG_PORT" -w -t 60 start \
    >>"$dir/logs/pg_ctl.log" 2>&1; do
    n=$((n + 1))
    if [ "$n" -ge 15 ]; then
      tail -20 "$dir/postgres/postgres.log" >&2 || true
      die "PostgreSQL did not start (logs: $dir/postgres/postgres.log, $dir/logs/pg_ctl.log)"
    fi
    sleep 1
  done
}

stop_postgres() {
  [ -f "$(pg_data)/postmaster.pid" ] || return 0
  local pid n
  pid=$(pg_pid) || pid=
  if as_pg "$PG_BIN/pg_ctl" -D "$(pg_data)" -m fast -w -t 30 stop >>"$dir/logs/pg_ctl.log" 2>&1; then
    # pg_ctl returns once the postmaster removed its pid file, a moment before it exits:
    # down ends when the process is gone, so that its port and data are free.
    for ((n = 0; n < 100; n++)); do
      alive "$pid" || return 0
      sleep 0.05
    done
    return 0
  fi
  pid=$(pg_pid) || return 0
  if ours postgres "$pid"; then kill -9 "$pid" 2>/dev/null || true; fi
}

# psql_admin DB: runs the SQL on its standard input in DB as the admin role: the SQL (with
# the password it sets) on stdin and the admin's password in PGPASSWORD, on no command line.
psql_admin() {
  PGPASSWORD=$ADMIN_PWD "$PG_BIN/psql" -h "$POSTGRES_SEEDS" -p "$DB_PORT" -U "$ADMIN_USER" -d "$1" \
    -X -q -v ON_ERROR_STOP=1 -f - >>"$dir/logs/schema.log" 2>&1 || {
    tail -5 "$dir/logs/schema.log" >&2
    die "setting up PostgreSQL's roles and databases failed in $1 (log: $dir/logs/schema.log)"
  }
}

# setup_roles: the server's role, a login with no other attribute, owns its two databases:
# it cannot run programs on the host (COPY ... TO PROGRAM), read its files or make roles.
# Idempotent: a cluster brought up again keeps its role and databases.
setup_roles() {
  say "roles: $POSTGRES_USER (owns temporal and temporal_visibility), $ADMIN_USER (setup only)"
  psql_admin postgres <<EOF
SELECT 'CREATE ROLE $POSTGRES_USER' WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '$POSTGRES_USER') \gexec
ALTER ROLE $POSTGRES_USER WITH LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS PASSWORD '$POSTGRES_PWD';
SELECT 'CREATE DATABASE temporal OWNER $POSTGRES_USER' WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = 'temporal') \gexec
SELECT 'CREATE DATABASE temporal_visibility OWNER $POSTGRES_USER' WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = 'temporal_visibility') \gexec
ALTER DATABASE temporal OWNER TO $POSTGRES_USER;
ALTER DATABASE temporal_visibility OWNER TO $POSTGRES_USER;
EOF
  # The visibility schema's first statement; an extension is the admin's to create.
  psql_admin temporal_visibility <<<'CREATE EXTENSION IF NOT EXISTS btree_gin;'
}

sql() {
  SQL_PASSWORD=$POSTGRES_PWD "$sql_tool" --plugin "$DB" --ep "$POSTGRES_SEEDS" -p "$DB_PORT" -u "$POSTGRES_USER" "$@" \
    >>"$dir/logs/schema.log" 2>&1 || {
    tail -5 "$dir/logs/schema.log" >&2
    die "temporal-sql-tool $* failed (log: $dir/logs/schema.log)"
  }
}

# Idempotent, like compose's temporal-schema step: brings both schemas to the version this
# server ships, as the role that owns them (setup_roles made the databases).
setup_schema() {
  say "schemas: temporal and temporal_visibility ($schema_dir)"
  sql --db temporal setup-schema -v 0.0
  sql --db temporal update-schema -d "$schema_dir/temporal/versioned"
  sql --db temporal_visibility setup-schema -v 0.0
  sql --db temporal_visibility update-schema -d "$schema_dir/visibility/versioned"
}

# forget_members: the membership rows of an earlier run (none of its processes runs now).
# A starting service first tries to join every member that sent a heartbeat lately, and
# gives up on the dead ones only after maxJoinDuration (30 s).
forget_members() {
  PGPASSWORD=$POSTGRES_PWD "$PG_BIN/psql" -h "$POSTGRES_SEEDS" -p "$DB_PORT" -U "$POSTGRES_USER" -d temporal \
    -X -qAt -c 'DELETE FROM cluster_membership' >>"$dir/logs/schema.log" 2>&1 ||
    say "could not clear the membership of an earlier run (the services may take 30 s longer to join)"
}

# ---- ports and the cluster's settings ----

# port_taken PORT: some socket has PORT as its local port (one in TIME_WAIT does not
# count: PostgreSQL and Go listen with SO_REUSEADDR).
port_taken() {
  local hex
  hex=$(printf ':%04X' "$1")
  awk -v h="$hex" 'FNR > 1 && $4 != "06" && substr($2, length($2) - 4) == h { found = 1 } END { exit !found }' \
    /proc/net/tcp /proc/net/tcp6 2>/dev/null
}
# port_listening PORT: some socket listens on PORT.
port_listening() {
  local hex
  hex=$(printf ':%04X' "$1")
  awk -v h="$hex" 'FNR > 1 && $4 == "0A" && substr($2, length($2) - 4) == h { found = 1 } END { exit !found }' \
    /proc/net/tcp /proc/net/tcp6 2>/dev/null
}
block_free() {
  local p
  for ((p = $1; p < $1 + 10; p++)); do
    if port_taken "$p"; then return 1; fi
  done
}
# choose_ports [PREVIOUS]: TODOFLOW_CLUSTER_PORT_BASE, else the block DIR had before
# when it is still free (the cluster keeps its address), else a random free one.
choose_ports() {
  local base n previous=${1:-}
  if [ -n "${TODOFLOW_CLUSTER_PORT_BASE:-}" ]; then
    base=$TODOFLOW_CLUSTER_PORT_BASE
    # The membership table keeps ports as SMALLINT.
    [[ "$base" =~ ^[0-9]+$ ]] && [ "$base" -ge 1024 ] && [ "$base" -le 32758 ] ||
      die "TODOFLOW_CLUSTER_PORT_BASE=$base: want a port from 1024 to 32758 (Temporal's membership table keeps ports as SMALLINT)"
    block_free "$base" || die "a port from $base to $((base + 9)) is in use (TODOFLOW_CLUSTER_PORT_BASE)"
  elif [ -n "$previous" ] && block_free "$previous"; then
    base=$previous
  else
    # Below the kernel's ephemeral range, so no outgoing connection holds one meanwhile.
    for ((n = 0; ; n++)); do
      [ "$n" -lt 100 ] || die "no ten free ports in a row between 20000 and 32000"
      base=$((20000 + (RANDOM % 1200) * 10))
      block_free "$base" && break
    done
  fi
  PORT_BASE=$base
  PG_PORT=$base
  FRONTEND_GRPC_PORT=$((base + 1))
  FRONTEND_HTTP_PORT=$((base + 2))
  FRONTEND_MEMBERSHIP_PORT=$((base + 3))
  HISTORY_GRPC_PORT=$((base + 4))
  HISTORY_MEMBERSHIP_PORT=$((base + 5))
  MATCHING_GRPC_PORT=$((base + 6))
  MATCHING_MEMBERSHIP_PORT=$((base + 7))
  WORKER_GRPC_PORT=$((base + 8))
  WORKER_MEMBERSHIP_PORT=$((base + 9))
}

# The cluster's settings, written to cluster.env by `up` and read by every command. The
# server's are the variables deploy/temporal/todoflow.yaml reads, the only ones its
# processes get; the script's own stay in this shell (the admin's password among them).
server_vars=(DB DB_PORT POSTGRES_SEEDS POSTGRES_USER POSTGRES_PWD NUM_HISTORY_SHARDS BIND_ON_IP
  FRONTEND_GRPC_PORT FRONTEND_HTTP_PORT FRONTEND_MEMBERSHIP_PORT HISTORY_GRPC_PORT HISTORY_MEMBERSHIP_PORT
  MATCHING_GRPC_PORT MATCHING_MEMBERSHIP_PORT WORKER_GRPC_PORT WORKER_MEMBERSHIP_PORT DYNAMIC_CONFIG_FILE_PATH)
env_vars=(PORT_BASE PG_BIN PG_USER PG_PORT ADMIN_USER ADMIN_PWD OWNER_PID TEMPORAL_ADDRESS "${server_vars[@]}")
# None comes from the caller's environment: each is set here, and exported only on purpose.
unset "${env_vars[@]}"

# plain NAME VALUE: VALUE is of the kind NAME holds: a number, a password of letters and
# digits, a user name, an absolute path, or a word of the characters of hosts and names.
# Nothing else is written to cluster.env or taken from it.
plain() {
  case $1 in
  *_PORT | PORT_BASE | NUM_HISTORY_SHARDS) [[ $2 =~ ^[0-9]{1,5}$ ]] ;;
  OWNER_PID) [[ $2 =~ ^[0-9]*$ ]] ;;
  *_PWD) [[ $2 =~ ^[A-Za-z0-9]{16,}$ ]] ;;
  PG_USER) [[ $2 =~ ^([a-z_][a-z0-9_-]*)?$ ]] ;;
  PG_BIN | DYNAMIC_CONFIG_FILE_PATH) [[ $2 =~ ^/[^[:cntrl:]]*$ ]] ;;
  *) [[ $2 =~ ^[A-Za-z0-9_.:-]+$ ]] ;;
  esac
}

write_env() {
  local v
  for v in "${env_vars[@]}"; do
    plain "$v" "${!v}" || die "$v=${!v@Q} is not a value cluster.sh writes to cluster.env (a path with control characters?)"
  done
  {
    echo "# Written by deploy/cluster.sh up; read (NAME=VALUE, never run) by every command. The"
    echo "# server's settings are the variables of deploy/temporal/todoflow.yaml."
    for v in "${env_vars[@]}"; do printf '%s=%s\n' "$v" "${!v}"; done
  } >"$dir/cluster.env"
}

# read_env: the settings of DIR/cluster.env, parsed: every line NAME=VALUE with a known NAME
# and a plain VALUE, or blank, or a comment; every known name set. The file is never run,
# so a line of anything else stops the command.
read_env() {
  local file=$dir/cluster.env line n=0 v value
  [ -f "$file" ] || die "$dir has no cluster (no cluster.env): deploy/cluster.sh up $dir first"
  unset "${env_vars[@]}"
  while IFS= read -r line || [ -n "$line" ]; do
    n=$((n + 1))
    [[ -z $line || $line == '#'* ]] && continue
    [[ $line =~ ^([A-Z][A-Z0-9_]*)=(.*)$ ]] ||
      die "refusing $file: line $n is not NAME=VALUE (cluster.sh reads settings there and runs nothing)"
    v=${BASH_REMATCH[1]} value=${BASH_REMATCH[2]}
    [[ " ${env_vars[*]} " == *" $v "* ]] || die "refusing $file: line $n sets $v, which is not a setting of cluster.sh"
    plain "$v" "$value" || die "refusing $file: line $n: $v's value is not a plain one"
    printf -v "$v" '%s' "$value"
  done <"$file"
  for v in "${env_vars[@]}"; do
    [ -n "${!v+set}" ] ||
      die "refusing $file: it sets no $v (an older cluster.sh's? bring its cluster down with that script, then use a new folder)"
  done
}

# ---- the state folder ----

# mode_ok PATH OWNER...: PATH belongs to one of the uids OWNER and neither its group nor
# others may write it, unless it is a folder with the sticky bit (/tmp), where they cannot
# rename or remove what is not theirs. Otherwise it says why on stdout.
mode_ok() {
  local path=$1 owner name mode o
  shift
  read -r owner name mode < <(stat -c '%u %U %a' -- "$path") || {
    echo "cannot stat it"
    return 1
  }
  for o in "$@"; do [ "$owner" != "$o" ] || break; done
  [ "$owner" = "$o" ] || {
    echo "it belongs to $name (uid $owner)"
    return 1
  }
  if (((8#$mode & 8#022) != 0 && (8#$mode & 8#1000) == 0)); then
    echo "its mode $mode lets others than its owner write in it"
    return 1
  fi
}

# check_dir: DIR as an absolute path without links, and trusted: it belongs to this user,
# and neither it nor a folder above it can be written (its entries replaced) by another
# user, so that everything in it was put there by this user. A link among the entries this
# script makes, which would lead its writes elsewhere, is refused too.
check_dir() {
  local uid why path entry
  uid=$(id -u)
  [ -d "$dir" ] || die "no folder $dir"
  dir=$(cd -- "$dir" && pwd -P)
  why=$(mode_ok "$dir" "$uid") ||
    die "refusing $dir: $why, so another user may have written it; use a folder of your own (mktemp -d)"
  path=$dir
  while [ "$path" != / ]; do
    path=$(dirname -- "$path")
    why=$(mode_ok "$path" 0 "$uid") ||
      die "refusing $dir: the folder $path above it is not safe ($why): another user could replace $dir"
  done
  for entry in cluster.env logs run config postgres; do
    [ ! -L "$dir/$entry" ] || die "refusing $dir: $dir/$entry is a symbolic link (cluster.sh makes no links)"
  done
}

# make_dir: DIR, created with mode 0700 when missing, then checked (check_dir).
make_dir() {
  if [ ! -e "$dir" ] && [ ! -L "$dir" ]; then
    mkdir -p -- "$(dirname -- "$dir")"
    mkdir -m 0700 -- "$dir" || die "cannot create $dir"
  fi
  check_dir
}

# let_pg_in: PostgreSQL's user, when it is not this one, must reach DIR/postgres: DIR's
# group becomes that user's, with search only (mode g=x), unless it can already. A folder
# whose group has rights of its own is left as it is.
let_pg_in() {
  [ -n "$PG_USER" ] && ! as_pg test -x "$dir" || return 0
  (((8#$(stat -c %a "$dir") & 8#070) == 0)) ||
    die "$PG_USER cannot search $dir, and its group has rights already: chmod o+x it, or use a new folder (mktemp -d)"
  chgrp -- "$(id -gn "$PG_USER")" "$dir"
  chmod g=x "$dir"
}

# ---- the server's services ----

svc_pidfile() { echo "$dir/run/$1.pid"; }
svc_pid() { [ -f "$(svc_pidfile "$1")" ] && cat "$(svc_pidfile "$1")"; }
# alive PID: PID is a process id, and its process runs (a zombie, killed but not yet
# reaped, does not).
alive() {
  [[ ${1:-} =~ ^[1-9][0-9]*$ ]] && kill -0 "$1" 2>/dev/null || return 1
  local stat
  stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 0
  stat=${stat##*) }
  [ "${stat%% *}" != Z ]
}

# How a service starts: in its own session, so it outlives this script; sh writes its own
# pid, then becomes the server (svc_argv sets argv to the server's command line).
# shellcheck disable=SC2016 # expanded by sh, as are the watchdog's by bash
launcher='echo $$ >"$0"; exec "$@"'
svc_argv() { argv=("$server_bin" --root "$dir" --config config --env todoflow --allow-no-auth start --service "$1"); }
# The watchdog TODOFLOW_CLUSTER_OWNER_PID leaves: bash -c "$watchdog" watchdog OWNER SCRIPT DIR.
# shellcheck disable=SC2016
watchdog='while kill -0 "$1" 2>/dev/null; do sleep 2; done; echo "owner $1 gone"; exec "$2" down "$3"'

# cmdline_is PID ARG...: PID's command line (/proc/PID/cmdline) is exactly ARG...
cmdline_is() {
  local pid=$1 have i=0 a
  shift
  mapfile -d '' -t have 2>/dev/null <"/proc/$pid/cmdline" || return 1
  [ "${#have[@]}" = $# ] || return 1
  for a in "$@"; do
    [ "${have[i]}" = "$a" ] || return 1
    i=$((i + 1))
  done
}

# ours NAME PID: PID runs, and is the process this script started as NAME (a service,
# postgres or watchdog), as its command line says. A pid file gives a number only: its
# process may have exited and the number gone to another, or the file named another from
# the start. One that is not ours is left alone, with a line that says so.
ours() {
  local name=$1 pid=$2 argv=()
  alive "$pid" || return 1
  case $name in
  postgres) cmdline_is "$pid" "$PG_BIN/postgres" -D "$(pg_data)" -p "$PG_PORT" && return ;;
  watchdog) cmdline_is "$pid" bash -c "$watchdog" watchdog "$OWNER_PID" "$self" "$dir" && return ;;
  *)
    svc_argv "$name"
    # Between its pid file and its exec, the service is still the sh that wrote the file.
    cmdline_is "$pid" "${argv[@]}" && return
    cmdline_is "$pid" sh -c "$launcher" "$(svc_pidfile "$name")" "${argv[@]}" && return
    ;;
  esac
  say "$name: pid $pid runs, but not as the $name this cluster started (its command line differs): left alone" >&2
  return 1
}

# server_env CMD...: runs CMD in DIR with the server's settings exported, and only those.
server_env() {
  (
    export "${server_vars[@]}"
    cd "$dir"
    exec "$@"
  )
}
svc_port() {
  case $1 in
  frontend) echo "$FRONTEND_GRPC_PORT" ;;
  history) echo "$HISTORY_GRPC_PORT" ;;
  matching) echo "$MATCHING_GRPC_PORT" ;;
  worker) echo "$WORKER_MEMBERSHIP_PORT" ;; # the worker service serves no gRPC
  esac
}

# svc_ready SERVICE LOG LINES: SERVICE has joined the membership ring and is ready to
# serve, as its log (after its first LINES lines) tells: the frontend once healthy, history
# once it owns its shards, matching and worker once they see the ring's members.
svc_ready() {
  local mark
  case $1 in
  frontend) mark='"Frontend is now healthy"' ;;
  history) mark='"initial shards ready"' ;;
  *) mark='"Current reachable members"' ;;
  esac
  port_listening "$(svc_port "$1")" && tail -n +"$(($3 + 1))" "$2" | grep -q "$mark"
}

start_service() {
  local svc=$1 pidfile pid n log lines argv=()
  pidfile=$(svc_pidfile "$svc")
  log="$dir/logs/$svc.log"
  rm -f "$pidfile"
  printf '\n---- %s: starting %s\n' "$(date '+%F %T')" "$svc" >>"$log"
  lines=$(wc -l <"$log")
  svc_argv "$svc"
  server_env setsid sh -c "$launcher" "$pidfile" "${argv[@]}" >>"$log" 2>&1 </dev/null &
  for ((n = 0; n < 50; n++)); do
    [ -s "$pidfile" ] && break
    sleep 0.1
  done
  pid=$(svc_pid "$svc") || die "$svc did not start"
  for ((n = 0; ; n++)); do
    if ! alive "$pid"; then
      show_log "$log" "$lines"
      die "$svc exited at start (log: $log)"
    fi
    svc_ready "$svc" "$log" "$lines" && break
    [ "$n" -lt 1200 ] || die "$svc is not up after 120 s (log: $log)"
    sleep 0.1
  done
}

# show_log LOG LINES: the errors LOG had after its first LINES lines, cut to fit a terminal.
show_log() {
  tail -n +"$(($2 + 1))" "$1" | grep -v '"level":"\(info\|debug\|warn\)"' | tail -8 | cut -c1-400 >&2
}

stop_service() {
  local svc=$1 pid n
  pid=$(svc_pid "$svc") || return 0
  if ours "$svc" "$pid"; then
    kill -TERM "$pid" 2>/dev/null || true
    for ((n = 0; n < 150; n++)); do
      alive "$pid" || break
      sleep 0.1
    done
    if alive "$pid"; then
      say "$svc did not stop within 15 s: SIGKILL"
      kill -KILL "$pid" 2>/dev/null || true
    fi
  fi
  rm -f "$(svc_pidfile "$svc")"
}

# wait_until WHAT SECONDS CMD...: retries CMD every half second.
wait_until() {
  local what=$1 limit=$2 start
  shift 2
  start=$(date +%s)
  until "$@" >>"$dir/logs/cli.log" 2>&1; do
    if [ $(($(date +%s) - start)) -ge "$limit" ]; then
      tail -5 "$dir/logs/cli.log" >&2
      die "$what: not after $limit s (log: $dir/logs/cli.log)"
    fi
    sleep 0.5
  done
}

# The default namespace and the search attributes, created when missing.
setup_namespace() {
  wait_until "the frontend's health check" 120 temporal operator cluster health
  wait_until "the default namespace" 60 ensure_namespace
  wait_until "todoflow's search attributes" 60 ensure_search_attributes
  # Usable end to end: visibility answers, history and matching own the namespace.
  wait_until "listing workflows" 60 temporal workflow list --namespace default --limit 1
  wait_until "a task queue of the namespace" 60 temporal task-queue describe --namespace default --task-queue todoflow
  wait_until "history's answer" 60 probe_history
}
ensure_namespace() {
  temporal operator namespace describe --namespace default && return
  echo "cluster: creating namespace default"
  temporal operator namespace create --namespace default
}
ensure_search_attributes() {
  local have kv missing=()
  have=$(temporal operator search-attribute list --namespace default) || return 1
  for kv in "${search_attributes[@]}"; do
    grep -qw "${kv%%=*}" <<<"$have" || missing+=("$kv")
  done
  [ ${#missing[@]} != 0 ] || return 0
  echo "cluster: creating search attributes ${missing[*]}"
  for kv in "${missing[@]}"; do
    temporal operator search-attribute create --namespace default --name "${kv%%=*}" --type "${kv#*=}" || return 1
  done
}
# probe_history: history answers for the namespace ("not found" is an answer).
probe_history() {
  local out
  out=$(temporal workflow describe --namespace default --workflow-id "cluster-sh-probe" 2>&1) && return 0
  grep -qi "workflow not found\|not found for ID" <<<"$out"
}

# add_dynamic_config COPY: TODOFLOW_CLUSTER_DYNAMIC_CONFIG's settings added to COPY (a key
# both set would make the file one the server cannot read).
add_dynamic_config() {
  local extra=${TODOFLOW_CLUSTER_DYNAMIC_CONFIG:-} key
  [ -n "$extra" ] || return 0
  [ -f "$extra" ] || die "TODOFLOW_CLUSTER_DYNAMIC_CONFIG=$extra is not a file"
  while read -r key; do
    ! grep -qxF "$key" <(grep -o '^[A-Za-z][^:[:space:]]*:' "$here/temporal/dynamicconfig.yaml") ||
      die "TODOFLOW_CLUSTER_DYNAMIC_CONFIG=$extra sets ${key%:}, which deploy/temporal/dynamicconfig.yaml sets already"
  done < <(grep -o '^[A-Za-z][^:[:space:]]*:' "$extra")
  {
    printf '\n# From TODOFLOW_CLUSTER_DYNAMIC_CONFIG=%s\n' "$extra"
    cat "$extra"
  } >>"$1"
  say "dynamic config: added $(grep -c '^[A-Za-z]' "$extra") setting(s) of $extra"
}

# ---- commands ----

cmd_up() {
  make_dir
  (umask 077 && mkdir -p "$dir/logs" "$dir/run" "$dir/config")
  local start reuse_pwd='' reuse_admin_pwd='' reuse_base='' svc
  start=$(date +%s)
  if [ -f "$dir/cluster.env" ]; then
    read_env
    for svc in "${services[@]}"; do
      ! ours "$svc" "$(svc_pid "$svc" || true)" || die "a cluster is already up in $dir (deploy/cluster.sh down $dir first)"
    done
    ! ours postgres "$(pg_pid || true)" || die "a cluster is already up in $dir (deploy/cluster.sh down $dir first)"
    # A cluster brought up before in DIR keeps its database, and with it its passwords,
    # and its ports when they are free.
    if [ -f "$dir/postgres/data/PG_VERSION" ]; then
      reuse_pwd=$POSTGRES_PWD reuse_admin_pwd=$ADMIN_PWD reuse_base=$PORT_BASE
    fi
  fi

  build_server
  find_cli
  ensure_postgres
  choose_pg_user
  let_pg_in
  choose_ports "$reuse_base"
  # What up writes in DIR from here on is for this user's eyes (and PostgreSQL's, in its
  # own folder): the settings hold the passwords, the logs the server's configuration.
  umask 077
  OWNER_PID=${TODOFLOW_CLUSTER_OWNER_PID:-}
  [ -z "$OWNER_PID" ] || alive "$OWNER_PID" || die "TODOFLOW_CLUSTER_OWNER_PID=$OWNER_PID is not running"
  ADMIN_USER=todoflow_admin
  ADMIN_PWD=${reuse_admin_pwd:-$(new_password)}
  DB=postgres12
  DB_PORT=$PG_PORT
  POSTGRES_SEEDS=127.0.0.1
  POSTGRES_USER=temporal
  POSTGRES_PWD=${reuse_pwd:-$(new_password)}
  NUM_HISTORY_SHARDS=4
  BIND_ON_IP=127.0.0.1
  DYNAMIC_CONFIG_FILE_PATH=$dir/config/dynamicconfig.yaml
  TEMPORAL_ADDRESS=127.0.0.1:$FRONTEND_GRPC_PORT
  cp "$here/temporal/todoflow.yaml" "$dir/config/todoflow.yaml"
  cp "$here/temporal/dynamicconfig.yaml" "$dir/config/dynamicconfig.yaml"
  add_dynamic_config "$dir/config/dynamicconfig.yaml"
  write_env
  say "$dir: ports $PORT_BASE-$((PORT_BASE + 9)), temporal-server $server_version, PostgreSQL in $PG_BIN"

  # The configuration as the server reads it, checked before anything starts (its errors
  # only: the rendered file holds the password).
  server_env "$server_bin" --root "$dir" --config config --env todoflow render-config >/dev/null 2>"$dir/logs/config.log" || {
    tail -3 "$dir/logs/config.log" >&2
    die "the server's configuration does not load (log: $dir/logs/config.log)"
  }

  # From here on a failed `up` stops what it started (the logs stay in DIR).
  trap 'up_failed $?' EXIT

  if [ -n "$OWNER_PID" ]; then
    setsid bash -c "$watchdog" watchdog "$OWNER_PID" "$self" "$dir" >>"$dir/logs/watchdog.log" 2>&1 </dev/null &
    echo $! >"$dir/run/watchdog.pid"
  fi

  init_postgres
  start_postgres
  say "postgres up on 127.0.0.1:$PG_PORT (pid $(pg_pid))"
  setup_roles
  setup_schema
  forget_members

  # The frontend first: a process brings the cluster's metadata (its frontend address) up
  # to date as it starts, and several doing so at once conflict. Then the other three at
  # once, to save their start time.
  start_service frontend
  local pids=()
  for svc in history matching worker; do
    start_service "$svc" &
    pids+=($!)
  done
  local failed=0 p
  for p in "${pids[@]}"; do wait "$p" || failed=1; done
  [ "$failed" = 0 ] || die "the server did not start (logs: $dir/logs/)"
  for svc in "${services[@]}"; do say "$svc up on 127.0.0.1:$(svc_port "$svc") (pid $(svc_pid "$svc"))"; done
  setup_namespace
  trap - EXIT
  say "up in $(elapsed "$start"); stop it with: deploy/cluster.sh down $dir"
  echo "TEMPORAL_ADDRESS=$TEMPORAL_ADDRESS"
}

# new_password: 128 random bits in hex, a plain value wherever it goes (SQL, YAML, env).
new_password() { head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n'; }

up_failed() {
  [ "$1" != 0 ] || return 0
  say "up failed: stopping what it started (logs: $dir/logs)" >&2
  cmd_down >&2 || true
  exit "$1"
}

cmd_down() {
  check_dir
  read_env
  local wd svc
  # (The watchdog runs down itself, as its last act.)
  if wd=$(cat "$dir/run/watchdog.pid" 2>/dev/null) && [ "$wd" != "$$" ] && ours watchdog "$wd"; then
    kill "$wd" 2>/dev/null || true
  fi
  rm -f "$dir/run/watchdog.pid"
  for svc in worker frontend matching history; do stop_service "$svc"; done
  stop_postgres
  say "down: $dir"
}

# kill_now NAME PID: SIGKILL to NAME's process PID, if it is ours, and wait until it is gone.
kill_now() {
  if ours "$1" "$2"; then
    kill -KILL "$2"
    while alive "$2"; do sleep 0.05; done
    say "$1 killed (SIGKILL, pid $2)"
  else
    say "$1 was not running"
  fi
}

cmd_restart() {
  local svc=$1 pid start
  case $svc in
  postgres | frontend | history | matching | worker) ;;
  *)
    echo "restart: unknown service $svc (frontend, history, matching, worker or postgres)" >&2
    exit 2
    ;;
  esac
  check_dir
  read_env
  start=$(date +%s%N)
  case $svc in
  postgres)
    pid=$(pg_pid) || true
    kill_now postgres "$pid"
    start_postgres
    say "postgres restarted (pid $(pg_pid)) in $((($(date +%s%N) - start) / 1000000)) ms"
    ;;
  frontend | history | matching | worker)
    pid=$(svc_pid "$svc") || true
    kill_now "$svc" "$pid"
    start_service "$svc"
    say "$svc restarted (pid $(svc_pid "$svc"), listening on $(svc_port "$svc")) in $((($(date +%s%N) - start) / 1000000)) ms"
    ;;
  esac
}

case ${1:-} in
up | down)
  [ $# = 2 ] || usage
  dir=$2
  "cmd_$1"
  ;;
restart)
  [ $# = 3 ] || usage
  dir=$2
  cmd_restart "$3"
  ;;
build)
  [ $# = 1 ] || usage
  build_server
  find_cli
  say "temporal-server: $server_bin"
  say "temporal-sql-tool: $sql_tool"
  say "temporal CLI: $cli_bin"
  ;;
*) usage ;;
esac
