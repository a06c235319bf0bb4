# Several Quell replicas on one PostgreSQL behind Debian's haproxy (round robin, loopback only).
# Sourced by scripts/cluster and scripts/faults after scripts/lib/db.sh. State lives in
# $QUELL_CLUSTER_DIR: each replica's pid and log, haproxy's config, pid and log.

quell_ensure_haproxy() {
  quell_ensure_commands haproxy=haproxy
}

# cluster_replica N: starts replica N (1-based) on port $((QUELL_CLUSTER_BASE + N)), in the
# background, and waits until it answers /healthz.
cluster_replica() {
  local n=$1 port=$((QUELL_CLUSTER_BASE + $1))
  QUELL_BIND="127.0.0.1:$port" QUELL_NO_MIGRATE=true RUST_LOG="${RUST_LOG:-warn}" \
    "$QUELL_BIN" serve >>"$QUELL_CLUSTER_DIR/replica-$n.log" 2>&1 &
  echo $! >"$QUELL_CLUSTER_DIR/replica-$n.pid"
  local _
  for _ in $(seq 100); do
    curl -fs "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  quell_log "replica $n did not start on port $port:"
  tail -n 5 "$QUELL_CLUSTER_DIR/replica-$n.log" >&2
  return 1
}

cluster_pid() { cat "$QUELL_CLUSTER_DIR/replica-$1.pid"; }

# cluster_start N: N replicas and haproxy in front on $QUELL_CLUSTER_PORT.
cluster_start() {
  local count=$1 n
  mkdir -p "$QUELL_CLUSTER_DIR"
  {
    echo "global"
    echo "  maxconn 4096"
    echo "defaults"
    echo "  mode http"
    echo "  option redispatch"
    echo "  retries 2"
    echo "  timeout connect 1s"
    echo "  timeout client 60s"
    echo "  timeout server 60s"
    echo "  timeout http-request 10s"
    echo "frontend quell"
    echo "  bind 127.0.0.1:$QUELL_CLUSTER_PORT"
    echo "  default_backend replicas"
    echo "backend replicas"
    echo "  balance roundrobin"
    echo "  option httpchk GET /healthz"
    echo "  default-server inter 500ms fall 2 rise 1"
    for n in $(seq "$count"); do
      echo "  server replica$n 127.0.0.1:$((QUELL_CLUSTER_BASE + n)) check"
    done
  } >"$QUELL_CLUSTER_DIR/haproxy.cfg"
  for n in $(seq "$count"); do cluster_replica "$n"; done
  haproxy -f "$QUELL_CLUSTER_DIR/haproxy.cfg" -db >>"$QUELL_CLUSTER_DIR/haproxy.log" 2>&1 &
  echo $! >"$QUELL_CLUSTER_DIR/haproxy.pid"
  local _
  for _ in $(seq 50); do
    curl -fs "http://127.0.0.1:$QUELL_CLUSTER_PORT/healthz" >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  quell_log "haproxy did not start; see $QUELL_CLUSTER_DIR/haproxy.log"
  return 1
}

cluster_stop() {
  local f
  for f in "$QUELL_CLUSTER_DIR"/*.pid; do
    [ -f "$f" ] && kill "$(cat "$f")" 2>/dev/null || true
    rm -f "$f"
  done
  wait 2>/dev/null || true
}
