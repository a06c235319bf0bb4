-- Flapping: an alert (integration and dedup key) that fires more than `flap_threshold` times
-- within `flap_window_minutes` is flapping; its incident then mitigates (or resolves, as the
-- integration says) only once the alert has stayed resolved for `flap_settle_minutes`.
alter table integrations
    add column flap_threshold integer not null default 3
        constraint integrations_flap_threshold_check check (flap_threshold between 0 and 100),
    add column flap_window_minutes integer not null default 30
        constraint integrations_flap_window_check check (flap_window_minutes between 1 and 1440),
    add column flap_settle_minutes integer not null default 10
        constraint integrations_flap_settle_check check (flap_settle_minutes between 0 and 1440);

-- A key's fires in the last minutes, counted by the intake at each new fire.
create index alerts_key_history on alerts (integration_id, dedup_key, received_at);

-- One row per flapping alert, from the fire that found it until it settles.
create table alert_flapping (
    integration_id uuid not null
        constraint alert_flapping_integration_fkey references integrations (id) on delete cascade,
    dedup_key text not null,
    incident_id bigint not null
        constraint alert_flapping_incident_fkey references incidents (id) on delete cascade,
    summary text not null,
    -- its fires within the integration's window when last counted, and all of them since it
    -- was found flapping
    fires integer not null constraint alert_flapping_fires_check check (fires > 0),
    since timestamptz not null,
    last_fired_at timestamptz not null,
    -- set when it resolves, cleared when it fires again; when it passes, it has settled
    settle_due_at timestamptz,
    settled_at timestamptz,
    constraint alert_flapping_pkey primary key (integration_id, dedup_key)
);
create index alert_flapping_incident on alert_flapping (incident_id);
create index alert_flapping_due on alert_flapping (settle_due_at)
    where settled_at is null and settle_due_at is not null;

-- Incidents the alerts mitigated, and when: a mitigation an alert's flapping withdraws is
-- only ever one the alerts made, never a responder's.
create table alert_mitigations (
    incident_id bigint not null constraint alert_mitigations_pkey primary key
        constraint alert_mitigations_incident_fkey references incidents (id) on delete cascade,
    mitigated_at timestamptz not null
);

-- Wakes each replica's settle engine when a flapping alert starts settling (a row-level
-- trigger with a condition: a resolve that settles nothing notifies nobody, and commits that
-- notify queue behind one another in PostgreSQL).
create function alert_flapping_changed() returns trigger language plpgsql as $$
begin
    perform pg_notify('quell_flapping', '');
    return null;
end $$;
create trigger alert_flapping_changed after insert or update on alert_flapping
    for each row when (new.settled_at is null and new.settle_due_at is not null)
    execute function alert_flapping_changed();
