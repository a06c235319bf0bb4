# shellcheck shell=bash
# Sourced by scripts/run, scripts/test and the benchmarks. Ensures a PostgreSQL server to talk to and
# exports DATABASE_URL. When DATABASE_URL is already set, it is used as it is. Otherwise a private
# cluster is created (once) under $QUELL_PGDATA (default /tmp/quell-pg-<uid>/data) and started on
# 127.0.0.1:$QUELL_PGPORT (default 54329 for root, 54329 + uid mod 997 for others). PostgreSQL
# refuses to run as root, so as root the cluster belongs to the `postgres` account.

quell_log() { printf '\033[1m[quell]\033[0m %s\n' "$*" >&2; }

quell_as_pg_owner() {
  if [ "$(id -u)" = 0 ]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

quell_pg_bindir() {
  local dir
  for dir in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
    [ -x "$dir/initdb" ] && { echo "$dir"; return 0; }
  done
  command -v initdb >/dev/null 2>&1 && { dirname "$(command -v initdb)"; return 0; }
  return 1
}

quell_install_postgres() {
  quell_log "PostgreSQL server not found; installing it with apt-get"
  local sudo=""
  [ "$(id -u)" = 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq postgresql >/dev/null
}

quell_ensure_database() {
  if [ -n "${DATABASE_URL:-}" ]; then
    quell_log "using DATABASE_URL from the environment"
    return 0
  fi
  local bindir
  bindir=$(quell_pg_bindir) || { quell_install_postgres; bindir=$(quell_pg_bindir); } || {
    quell_log "could not find initdb after installing PostgreSQL"; return 1; }

  # One cluster per account, each on its own port, so two users of one machine do not collide.
  local port="${QUELL_PGPORT:-$((54329 + $(id -u) % 997))}"
  local data="${QUELL_PGDATA:-/tmp/quell-pg-$(id -u)/data}"
  local base
  base=$(dirname "$data")
  if [ ! -f "$data/PG_VERSION" ]; then
    quell_log "creating a private PostgreSQL cluster in $data (port $port)"
    mkdir -p "$base"
    [ "$(id -u)" = 0 ] && chown postgres: "$base"
    chmod 700 "$base"
    local pwfile="$base/pwfile"
    echo quell >"$pwfile"
    [ "$(id -u)" = 0 ] && chown postgres: "$pwfile"
    quell_as_pg_owner "$bindir/initdb" -D "$data" -U quell --pwfile="$pwfile" \
      --auth-local=scram-sha-256 --auth-host=scram-sha-256 -E UTF8 --locale=C.UTF-8 >/dev/null
    rm -f "$pwfile"
    cat >>"$data/postgresql.conf" <<CONF
listen_addresses = '127.0.0.1'
port = $port
unix_socket_directories = '$base'
max_connections = 400
shared_buffers = 256MB
fsync = on
timezone = 'UTC'
CONF
  fi
  if ! quell_as_pg_owner "$bindir/pg_ctl" -D "$data" status >/dev/null 2>&1; then
    quell_log "starting PostgreSQL on 127.0.0.1:$port"
    quell_as_pg_owner "$bindir/pg_ctl" -D "$data" -l "$base/postgres.log" -w -t 60 start >/dev/null || {
      tail -n 20 "$base/postgres.log" >&2; return 1; }
  fi
  export DATABASE_URL="postgres://quell:quell@127.0.0.1:$port/quell"
  if ! PGPASSWORD=quell "$bindir/psql" -h 127.0.0.1 -p "$port" -U quell -d postgres -tAc \
      "select 1 from pg_database where datname = 'quell'" | grep -q 1; then
    PGPASSWORD=quell "$bindir/createdb" -h 127.0.0.1 -p "$port" -U quell quell
  fi
}

# Installs the Debian packages of missing commands: quell_ensure_commands wrk=wrk curl=curl …
quell_ensure_commands() {
  local missing=() pair
  for pair in "$@"; do
    command -v "${pair%%=*}" >/dev/null 2>&1 || missing+=("${pair#*=}")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  quell_apt_install "${missing[@]}"
}

# Installs Debian packages: quell_apt_install python3-venv …
quell_apt_install() {
  quell_log "installing $* with apt-get"
  local sudo=""
  [ "$(id -u)" = 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "$@" >/dev/null
}

# Debian's chromium and chromedriver for the browser tests.
quell_ensure_chromium() {
  quell_ensure_commands chromium=chromium chromedriver=chromium-driver
}

# axe-core (pinned) for the accessibility check of the browser tests, from the npm registry
# into target/axe; Debian's npm when npm is missing.
QUELL_AXE_VERSION=4.14.1
quell_ensure_axe() {
  local dir="target/axe" js="target/axe/node_modules/axe-core/axe.min.js"
  if [ -f "$js" ] && grep -q "\"version\": \"$QUELL_AXE_VERSION\"" target/axe/node_modules/axe-core/package.json; then
    return 0
  fi
  quell_ensure_commands npm=npm
  quell_log "installing axe-core $QUELL_AXE_VERSION into $dir"
  mkdir -p "$dir"
  npm install --prefix "$dir" --no-audit --no-fund --silent "axe-core@$QUELL_AXE_VERSION" >/dev/null
}
