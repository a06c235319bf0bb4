# shellcheck shell=bash
# Sourced by the benchmarks (after scripts/lib/db.sh): the pieces scripts/bench-ingest,
# scripts/bench-sla and scripts/bench-scale share — tools, a release `quell serve` on a scratch
# database, integrations with known keys, PostgreSQL's own insert ceiling (pgbench), wrk posting
# Alertmanager webhooks, SLA timers by the million, and a process's CPU and memory.

# wrk, curl and python3 from Debian, pgbench from postgresql-client, oha from crates.io (once).
bench_tools() {
  quell_ensure_commands wrk=wrk curl=curl pgbench=postgresql-client python3=python3
  OHA="$(command -v oha || echo "$HOME/.cargo/bin/oha")"
  if [ ! -x "$OHA" ]; then
    quell_log "installing oha (cargo install oha --locked; a few minutes, once)"
    cargo install oha --locked --quiet
  fi
  export OHA
}

# The release build the benchmarks measure.
bench_build() {
  SQLX_OFFLINE=true cargo build --release --locked --quiet
  BENCH_BIN=target/release/quell
}

# A 32-hex-digit key from a number: bench_key 7
bench_key() { printf '%032x' "$1"; }

# An Alertmanager integration with a known key (stored as SHA-256 like any); prints its id.
# bench_integration DB_URL NAME KEY
bench_integration() {
  psql "$1" -qtAc "insert into integrations (name, format, key_hash, key_prefix)
    values ('$2', 'alertmanager', sha256(convert_to('$3', 'UTF8')), left('$3', 6)) returning id"
}

# Starts a release `quell serve` on DB_URL, waits until it answers and sets BENCH_PID and
# BENCH_URL. Extra VAR=value words are put in its environment.
# bench_serve DB_URL LOG [VAR=value ...]
bench_serve() {
  local db=$1 log=$2 port
  shift 2
  port=$((20000 + RANDOM % 12000))
  # Every alert kept: a benchmark measures the history it built, not one let go as it starts.
  env DATABASE_URL="$db" QUELL_BIND="127.0.0.1:$port" QUELL_NO_MIGRATE=true RUST_LOG=warn \
    QUELL_ALERT_RETENTION_DAYS=0 "$@" \
    "$BENCH_BIN" serve >"$log" 2>&1 &
  BENCH_PID=$!
  BENCH_URL="http://127.0.0.1:$port"
  local _
  for _ in $(seq 200); do curl -fs "$BENCH_URL/readyz" >/dev/null 2>&1 && return 0; sleep 0.1; done
  quell_log "quell serve did not start:"; tail -n 20 "$log" >&2; return 1
}

bench_stop() {
  kill "$1" 2>/dev/null || true
  wait "$1" 2>/dev/null || true
}

# PostgreSQL's own ceiling for storing alerts: pgbench, one transaction per alert (insert it,
# upsert its group), 7 labels and 2 annotations each. Prints transactions per second.
# bench_pgbench DB_URL SECONDS CONNECTIONS
bench_pgbench() {
  local db=$1 seconds=$2 connections=$3 integration incident script
  integration=$(bench_integration "$db" "pgbench-$RANDOM" "$(bench_key $((900000 + RANDOM)))")
  incident=$(psql "$db" -qtAc "insert into incidents (title, severity, peak_severity, status, started_at, detected_at)
    values ('pgbench', 'Sev3', 'Sev3', 'triggered', now(), now()) returning id")
  script=$(mktemp)
  cat >"$script" <<'SQL'
\set g random(1, 100)
begin;
with g as (
  insert into alert_groups (integration_id, group_key, incident_id)
  values (':integration'::uuid, 'g' || :g, :incident)
  on conflict (integration_id, group_key) where closed_at is null
  do update set incident_id = excluded.incident_id
  returning id)
insert into alerts (integration_id, group_id, incident_id, dedup_key, status, summary, source,
                    severity, labels, details, source_url, starts_at, routed, raw)
select ':integration'::uuid, g.id, :incident, gen_random_uuid()::text, 'firing', 'Alert on x', 'x:9100',
       'warning', '{"alertname":"Alert","instance":"x:9100","job":"node","severity":"warning","service":"payments-gateway","namespace":"payments","cluster":"eu-west-1"}',
       '{"summary":"Alert on x","runbook_url":"https://runbooks.example.com/Alert"}',
       'http://prometheus:9090/graph?g0.expr=up', now(),
       '{"rule":"Default","rule_id":1,"service":null,"severity":"Sev3","title":"Alert on x"}',
       '{"status":"firing","labels":{"alertname":"Alert","instance":"x:9100","job":"node","severity":"warning","service":"payments-gateway","namespace":"payments","cluster":"eu-west-1"},"annotations":{"summary":"Alert on x","runbook_url":"https://runbooks.example.com/Alert"},"startsAt":"2026-11-30T06:00:00Z","endsAt":"0001-01-01T00:00:00Z","generatorURL":"http://prometheus:9090/graph?g0.expr=up","fingerprint":"x"}'
from g;
end;
SQL
  psql "$db" -qc checkpoint
  pgbench -n -c "$connections" -j 2 -T "$seconds" -f "$script" \
    -D integration="$integration" -D incident="$incident" "$db" 2>/dev/null \
    | awk '/^tps = / { printf "%.0f\n", $3; exit }'
  rm -f "$script"
}

# Alertmanager webhooks from wrk (scripts/bench/ingest.lua): prints its RESULT line
# (accepted, refused, socket_errors, seconds, p50_ms, p99_ms, max_ms).
# bench_wrk HOOK_URL MODE ALERTS_PER_POST KEY LABEL SECONDS CONNECTIONS
bench_wrk() {
  wrk -t2 -c"$7" -d"${6}s" --timeout 10s -s scripts/bench/ingest.lua "$1" -- "$2" "$3" "$4" "$5" \
    | grep '^RESULT'
}

# One field of a RESULT line: bench_field "$line" p99_ms
bench_field() { sed -E "s/.*[ ]$2=([0-9.]+).*/\1/" <<<"$1"; }

# Open incidents with SLA timers, written directly (the engine under test only reads
# sla_timers): INCIDENTS incidents with an ack and a resolve timer each, all hours away.
# bench_timers DB_URL INCIDENTS
bench_timers() {
  psql "$1" -q <<SQL
insert into incidents (title, severity, peak_severity, status, started_at, detected_at)
select 'bench ' || g, 'Sev2', 'Sev2', 'triggered', now(), now() from generate_series(1, $2) g;
insert into sla_timers (incident_id, kind, due_at)
select id, 'ack', now() + interval '2 hours' + (random() * 3600) * interval '1 second'
from incidents where title like 'bench %';
insert into sla_timers (incident_id, kind, due_at)
select id, 'resolve', now() + interval '8 hours' from incidents where title like 'bench %';
vacuum analyze incidents, sla_timers;
SQL
}

# Moves DUE of the ack timers to fall due over SPREAD seconds from 5 s on, as a change that
# moves deadlines does (in one transaction that wakes the engines).
# bench_due DB_URL DUE SPREAD
bench_due() {
  psql "$1" -q <<SQL
begin;
update sla_timers set due_at = now() + interval '5 seconds' + (random() * $3) * interval '1 second'
where id in (select id from sla_timers where kind = 'ack' and state = 'pending' order by id limit $2);
select pg_notify('quell_timers', '');
commit;
SQL
}

# Breach lateness (breached − due, both by the database clock) of every breach recorded:
# prints "count p50_ms p99_ms max_ms".
bench_lateness() {
  psql "$1" -Atc "select count(*),
      round((percentile_cont(0.5) within group (order by extract(epoch from breached_at - due_at)))::numeric * 1000, 1),
      round((percentile_cont(0.99) within group (order by extract(epoch from breached_at - due_at)))::numeric * 1000, 1),
      round((max(extract(epoch from breached_at - due_at)))::numeric * 1000, 1)
    from sla_breaches" | tr '|' ' '
}

# A process's CPU time in clock ticks (user + system).
bench_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }

# Percent of one core PID used over SECONDS: bench_idle_cpu PID SECONDS
bench_idle_cpu() {
  local t0 t1 hz
  hz=$(getconf CLK_TCK)
  t0=$(bench_ticks "$1"); sleep "$2"; t1=$(bench_ticks "$1")
  awk -v d=$((t1 - t0)) -v hz="$hz" -v s="$2" 'BEGIN { printf "%.3f", 100 * d / hz / s }'
}

# Resident memory of PID in MiB.
bench_rss_mib() { awk '/^VmRSS:/ { printf "%.1f", $2 / 1024 }' "/proc/$1/status"; }

# The machine's CPU time so far, in ticks: "steal total" (steal: time the hypervisor gave this
# virtual machine's cores to others, the noise of a shared host).
bench_cpu_counters() { awk '/^cpu / { t = 0; for (i = 2; i <= 9; i++) t += $i; print $9, t }' /proc/stat; }

# Percent of CPU time stolen since COUNTERS (from bench_cpu_counters): bench_steal_since "$c"
bench_steal_since() {
  local s0 t0 s1 t1
  read -r s0 t0 <<<"$1"
  read -r s1 t1 <<<"$(bench_cpu_counters)"
  awk -v s=$((s1 - s0)) -v t=$((t1 - t0)) 'BEGIN { printf "%.1f", t ? 100 * s / t : 0 }'
}
