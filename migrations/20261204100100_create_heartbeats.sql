-- Heartbeat monitors: a job pings its monitor at least every `interval_minutes`; a ping
-- missing for longer than the interval and the grace opens an incident through routing, as an
-- alert from the "Quell heartbeats" integration would (dedup key: the monitor), and the next
-- ping resolves that alert.
create table heartbeat_monitors (
    id uuid not null default gen_random_uuid() constraint heartbeat_monitors_pkey primary key,
    -- unique, as Opsgenie's ping address names it: /v2/heartbeats/{name}/ping
    name text not null constraint heartbeat_monitors_name_key unique
        constraint heartbeat_monitors_name_check check (length(name) between 1 and 100),
    description text not null default '',
    -- a removed service takes its monitors with it (their open alerts are resolved by the engine)
    service_id bigint not null constraint heartbeat_monitors_service_fkey references services (id) on delete cascade,
    interval_minutes integer not null
        constraint heartbeat_monitors_interval_check check (interval_minutes between 1 and 10080),
    grace_minutes integer not null default 0
        constraint heartbeat_monitors_grace_check check (grace_minutes between 0 and 1440),
    -- the alert's own severity word, as a sender's (routing decides the incident's)
    severity text not null default 'error'
        constraint heartbeat_monitors_severity_check check (severity in ('critical', 'error', 'warning', 'info')),
    key_hash bytea not null,
    key_prefix text not null,
    enabled boolean not null default true,
    -- 'waiting' (no ping yet), 'up', 'down' (missed: its alert fires)
    state text not null default 'waiting'
        constraint heartbeat_monitors_state_check check (state in ('waiting', 'up', 'down')),
    last_ping_at timestamptz,
    pings bigint not null default 0,
    -- when it is missed unless pinged first: the last ping (or its creation) + interval + grace
    due_at timestamptz not null,
    down_since timestamptz,
    created_by text not null,
    version integer not null default 1,
    created_at timestamptz not null default now(),
    updated_at timestamptz not null default now()
);
create index heartbeat_monitors_due on heartbeat_monitors (due_at) where enabled and state <> 'down';
create unique index heartbeat_monitors_key on heartbeat_monitors (key_hash);

-- The integration missed heartbeats come from, made with the first monitor (nobody holds its
-- key); one row, locked while it is made.
create table heartbeat_settings (
    id boolean primary key default true constraint heartbeat_settings_one check (id),
    integration_id uuid constraint heartbeat_settings_integration_fkey references integrations (id)
);
insert into heartbeat_settings (id) values (true);

-- Wakes each replica's heartbeat engine when a monitor is made, removed, paused or its times
-- change (pings only move a due time later, so they wake nobody).
create function heartbeat_monitors_changed() returns trigger language plpgsql as $$
begin
    perform pg_notify('quell_heartbeats', '');
    return null;
end $$;
create trigger heartbeat_monitors_changed
    after insert or delete or update of interval_minutes, grace_minutes, enabled on heartbeat_monitors
    for each statement execute function heartbeat_monitors_changed();
