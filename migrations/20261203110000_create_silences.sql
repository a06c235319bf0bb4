-- Silences: alerts matching a silence's matchers between its start and end are stored and
-- counted but open no incident and page nobody.
create table silences (
    id bigint generated always as identity constraint silences_pkey primary key,
    -- each matcher as amtool writes it: alertname="HighLatency", service=~"pay.*"
    matchers jsonb not null constraint silences_matchers_check
        check (jsonb_typeof(matchers) = 'array' and jsonb_array_length(matchers) between 1 and 20),
    starts_at timestamptz not null,
    ends_at timestamptz not null,
    comment text not null constraint silences_comment_check check (length(btrim(comment)) > 0),
    created_by text not null,
    created_by_person bigint constraint silences_person_fkey references people (id) on delete set null,
    -- who ended it before its time, if anyone
    expired_by text,
    -- when the alerts it held that still fire were handed back to routing, after its end
    released_at timestamptz,
    version integer not null default 1,
    created_at timestamptz not null default now(),
    updated_at timestamptz not null default now(),
    constraint silences_window check (ends_at >= starts_at)
);
create index silences_ending on silences (ends_at);
create index silences_to_release on silences (ends_at) where released_at is null;

-- The longest a silence may last, as an admin set it (one row).
create table silence_policy (
    id boolean primary key default true constraint silence_policy_one check (id),
    max_hours integer not null default 336 constraint silence_policy_max_check check (max_hours between 1 and 8784),
    version integer not null default 1,
    updated_at timestamptz not null default now()
);
insert into silence_policy (id) values (true);

-- Bumped by every change to silences, so an alert lane reads one number per batch and the
-- silences themselves only when it changed.
create table silence_revision (
    id boolean primary key default true constraint silence_revision_one check (id),
    n bigint not null default 0
);
insert into silence_revision (id) values (true);
create function silences_changed() returns trigger language plpgsql as $$
begin
    update silence_revision set n = n + 1;
    -- wakes each replica's release engine for a new end
    perform pg_notify('quell_silences', '');
    return null;
end $$;
create trigger silences_changed after insert or update or delete on silences
    for each statement execute function silences_changed();

-- Alerts a silence held that joined no open incident: stored and counted, one row while it
-- fires per (integration, dedup key), as alerts are.
create table silenced_alerts (
    id bigint generated always as identity constraint silenced_alerts_pkey primary key,
    silence_id bigint not null constraint silenced_alerts_silence_fkey references silences (id) on delete cascade,
    integration_id uuid not null constraint silenced_alerts_integration_fkey references integrations (id) on delete cascade,
    dedup_key text not null,
    group_key text not null,
    -- released: still firing when its silence ended, and handed to routing then
    status text not null constraint silenced_alerts_status_check check (status in ('firing', 'resolved', 'released')),
    summary text not null,
    source text not null default '',
    severity text not null default '',
    labels jsonb not null default '{}',
    details jsonb not null default '{}',
    received_at timestamptz not null default now(),
    last_received_at timestamptz not null default now(),
    deliveries integer not null default 1,
    resolved_at timestamptz,
    raw jsonb not null,
    constraint silenced_alerts_resolved_stamp check ((status = 'firing') = (resolved_at is null))
);
create unique index silenced_alerts_one_open on silenced_alerts (integration_id, dedup_key) where status = 'firing';
create index silenced_alerts_silence on silenced_alerts (silence_id);
create index silenced_alerts_received on silenced_alerts (received_at);

-- Whether a held key now belongs to an alert of an incident kept from `viewer` (null: an
-- admin's or an engine's eyes): such a held row is neither counted nor listed for them.
create function held_key_hidden(integration uuid, key text, viewer bigint)
returns boolean
language sql stable parallel safe as $$
    select exists (select 1 from alerts a join incidents inc on inc.id = a.incident_id
                   where a.integration_id = integration and a.dedup_key = key
                     and not incident_visible(inc.restricted, inc.id, viewer))
$$;

-- An alert that joined an open incident while a silence matched it: noted, not paged.
alter table alerts add column silence_id bigint
    constraint alerts_silence_fkey references silences (id) on delete set null;
create index alerts_silence on alerts (silence_id) where silence_id is not null;
