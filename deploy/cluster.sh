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
# Run as root (as CI does), PostgreSQL runs as the `postgres` user (created when missing),
# since initdb refuses root; every folder above DIR must then be searchable by others.
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

here=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")" && pwd)
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
  local data pw
  data=$(pg_data)
  mkdir -p "$dir/postgres"
  if [ -n "$PG_USER" ]; then
    chown "$PG_USER" "$dir/postgres"
    as_pg test -w "$dir/postgres" ||
      die "$PG_USER cannot write $dir/postgres: every folder above it must be searchable by others (chmod o+x)"
  fi
  [ -f "$data/PG_VERSION" ] && return
  say "initdb $data (PostgreSQL $("$PG_BIN/postgres" --version | awk '{print $3}'), as ${PG_USER:-$(id -un)})"
  pw="$dir/postgres/pwfile"
  (umask 077 && printf '%s\n' "$POSTGRES_PWD" >"$pw")
  [ -z "$PG_USER" ] || chown "$PG_USER" "$pw"
  as_pg "$PG_BIN/initdb" -D "$data" -U "$POSTGRES_USER" --pwfile="$pw" -A scram-sha-256 -E UTF8 --no-locale \
    >"$dir/logs/initdb.log" 2>&1 || {
    rm -f "$pw"
    tail -20 "$dir/logs/initdb.log" >&2
    die "initdb failed (log: $dir/logs/initdb.log)"
  }
  rm -f "$pw"
  # TCP on the loopback only; no Unix socket (DIR may be longer than a socket path may be).
  # Four server processes hold up to 30 connections each.
  cat >>"$data/postgresql.conf" <<'EOF'

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
  as_pg "$PG_BIN/pg_ctl" -D "$(pg_data)" -m fast -w -t 30 stop >>"$dir/logs/pg_ctl.log" 2>&1 && return
  local pid
  pid=$(pg_pid) || return 0
  kill -9 "$pid" 2>/dev/null || true
}

sql() {
  "$sql_tool" --plugin "$DB" --ep "$POSTGRES_SEEDS" -p "$DB_PORT" -u "$POSTGRES_USER" --pw "$POSTGRES_PWD" "$@" \
    >>"$dir/logs/schema.log" 2>&1 || {
    tail -5 "$dir/logs/schema.log" >&2
    die "temporal-sql-tool $* failed (log: $dir/logs/schema.log)"
  }
}

# Idempotent, like compose's temporal-schema step: creates what is missing and brings both
# schemas to the version this server ships.
setup_schema() {
  say "schemas: temporal and temporal_visibility ($schema_dir)"
  sql --db temporal create
  sql --db temporal setup-schema -v 0.0
  sql --db temporal update-schema -d "$schema_dir/temporal/versioned"
  sql --db temporal_visibility create
  sql --db temporal_visibility setup-schema -v 0.0
  sql --db temporal_visibility update-schema -d "$schema_dir/visibility/versioned"
}

# forget_members: the membership rows of an earlier run (none of its processes runs now).
# A starting service first tries to join every member that sent a heartbeat lately, and
# gives up on the dead ones only after maxJoinDuration (30 s).
forget_members() {
  PGPASSWORD=$POSTGRES_PWD "$PG_BIN/psql" -h "$POSTGRES_SEEDS" -p "$DB_PORT" -U "$POSTGRES_USER" -d temporal \
    -qAt -c 'DELETE FROM cluster_membership' >>"$dir/logs/schema.log" 2>&1 ||
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

env_vars=(PORT_BASE PG_BIN PG_USER PG_PORT DB DB_PORT POSTGRES_SEEDS POSTGRES_USER POSTGRES_PWD NUM_HISTORY_SHARDS
  BIND_ON_IP FRONTEND_GRPC_PORT FRONTEND_HTTP_PORT FRONTEND_MEMBERSHIP_PORT HISTORY_GRPC_PORT HISTORY_MEMBERSHIP_PORT
  MATCHING_GRPC_PORT MATCHING_MEMBERSHIP_PORT WORKER_GRPC_PORT WORKER_MEMBERSHIP_PORT DYNAMIC_CONFIG_FILE_PATH
  TEMPORAL_ADDRESS)
write_env() {
  local v
  (
    umask 077
    {
      echo "# Written by deploy/cluster.sh up; read by down and restart. The server's settings are"
      echo "# the variables of deploy/temporal/todoflow.yaml."
      for v in "${env_vars[@]}"; do printf '%s=%q\n' "$v" "${!v}"; done
    } >"$dir/cluster.env"
  )
}
read_env() {
  [ -f "$dir/cluster.env" ] || die "$dir has no cluster (no cluster.env): deploy/cluster.sh up $dir first"
  # shellcheck source=/dev/null
  . "$dir/cluster.env"
}

# ---- the server's services ----

svc_pidfile() { echo "$dir/run/$1.pid"; }
svc_pid() { [ -f "$(svc_pidfile "$1")" ] && cat "$(svc_pidfile "$1")"; }
# alive PID: PID runs (a zombie, killed but not yet reaped, does not).
alive() {
  [ -n "${1:-}" ] && kill -0 "$1" 2>/dev/null || return 1
  local stat
  stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 0
  stat=${stat##*) }
  [ "${stat%% *}" != Z ]
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
  local svc=$1 pidfile pid n log lines
  pidfile=$(svc_pidfile "$svc")
  log="$dir/logs/$svc.log"
  rm -f "$pidfile"
  printf '\n---- %s: starting %s\n' "$(date '+%F %T')" "$svc" >>"$log"
  lines=$(wc -l <"$log")
  # Its own session, so it outlives this script; sh writes its own pid, then becomes the
  # server. The environment is cluster.env's, exported.
  (
    set -a
    . "$dir/cluster.env"
    set +a
    cd "$dir"
    exec setsid sh -c 'echo $$ >"$0"; exec "$@"' "$pidfile" \
      "$server_bin" --root "$dir" --config config --env todoflow --allow-no-auth start --service "$svc"
  ) >>"$log" 2>&1 </dev/null &
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
  if alive "$pid"; then
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
  mkdir -p "$dir"
  dir=$(cd "$dir" && pwd)
  mkdir -p "$dir/logs" "$dir/run" "$dir/config"
  if [ -f "$dir/cluster.env" ]; then
    local svc
    (
      read_env
      for svc in "${services[@]}"; do
        ! alive "$(svc_pid "$svc" || true)" || exit 1
      done
      ! alive "$(pg_pid || true)" || exit 1
    ) || die "a cluster is already up in $dir (deploy/cluster.sh down $dir first)"
  fi
  local start reuse_pwd='' reuse_base=
  start=$(date +%s)
  # A cluster brought up before in DIR keeps its database, and with it its password, and
  # its ports when they are free.
  if [ -f "$dir/cluster.env" ] && [ -f "$dir/postgres/data/PG_VERSION" ]; then
    reuse_pwd=$(. "$dir/cluster.env" && echo "$POSTGRES_PWD")
    reuse_base=$(. "$dir/cluster.env" && echo "$PORT_BASE")
  fi

  build_server
  find_cli
  ensure_postgres
  choose_pg_user
  choose_ports "$reuse_base"
  DB=postgres12
  DB_PORT=$PG_PORT
  POSTGRES_SEEDS=127.0.0.1
  POSTGRES_USER=temporal
  POSTGRES_PWD=${reuse_pwd:-$(head -c 18 /dev/urandom | base64 | tr -d '/+=')}
  NUM_HISTORY_SHARDS=4
  BIND_ON_IP=127.0.0.1
  DYNAMIC_CONFIG_FILE_PATH=$dir/config/dynamicconfig.yaml
  TEMPORAL_ADDRESS=127.0.0.1:$FRONTEND_GRPC_PORT
  cp "$here/temporal/todoflow.yaml" "$dir/config/todoflow.yaml"
  cp "$here/temporal/dynamicconfig.yaml" "$dir/config/dynamicconfig.yaml"
  add_dynamic_config "$dir/config/dynamicconfig.yaml"
  write_env
  say "$dir: ports $PORT_BASE-$((PORT_BASE + 9)), temporal-server $server_version, PostgreSQL in $PG_BIN"

  # The configuration as the server reads it, checked before anything starts.
  (set -a && . "$dir/cluster.env" && set +a && cd "$dir" &&
    "$server_bin" --root "$dir" --config config --env todoflow render-config) >"$dir/logs/config.log" 2>&1 || {
    tail -3 "$dir/logs/config.log" >&2
    die "the server's configuration does not load (log: $dir/logs/config.log)"
  }

  # From here on a failed `up` stops what it started (the logs stay in DIR).
  trap 'up_failed $?' EXIT

  if [ -n "${TODOFLOW_CLUSTER_OWNER_PID:-}" ]; then
    alive "$TODOFLOW_CLUSTER_OWNER_PID" || die "TODOFLOW_CLUSTER_OWNER_PID=$TODOFLOW_CLUSTER_OWNER_PID is not running"
    setsid bash -c 'while kill -0 "$1" 2>/dev/null; do sleep 2; done; echo "owner $1 gone"; exec "$2" down "$3"' \
      watchdog "$TODOFLOW_CLUSTER_OWNER_PID" "${BASH_SOURCE[0]}" "$dir" >>"$dir/logs/watchdog.log" 2>&1 </dev/null &
    echo $! >"$dir/run/watchdog.pid"
  fi

  init_postgres
  start_postgres
  say "postgres up on 127.0.0.1:$PG_PORT (pid $(pg_pid))"
  setup_schema
  forget_members

  # The frontend first: a process brings the cluster's metadata (its frontend address) up
  # to date as it starts, and several doing so at once conflict. Then the other three at
  # once, to save their start time.
  start_service frontend
  local svc pids=()
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

up_failed() {
  [ "$1" != 0 ] || return 0
  say "up failed: stopping what it started (logs: $dir/logs)" >&2
  cmd_down >&2 || true
  exit "$1"
}

cmd_down() {
  [ -d "$dir" ] || die "no folder $dir"
  dir=$(cd "$dir" && pwd)
  read_env
  local wd
  if wd=$(cat "$dir/run/watchdog.pid" 2>/dev/null) && [ "$wd" != "$$" ] && alive "$wd"; then
    kill "$wd" 2>/dev/null || true
  fi
  rm -f "$dir/run/watchdog.pid"
  local svc
  for svc in worker frontend matching history; do stop_service "$svc"; done
  stop_postgres
  say "down: $dir"
}

# kill_now NAME PID: SIGKILL, and wait until PID is gone.
kill_now() {
  if alive "$2"; then
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
  [ -d "$dir" ] || die "no folder $dir"
  dir=$(cd "$dir" && pwd)
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
