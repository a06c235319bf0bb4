-- The live incident room: every timeline entry announced on NOTIFY (so each replica's open
-- pages hear of a change made through any replica), the open event streams with their leases
-- (for the per-person limit across replicas), working-on claims, and each incident's bridge.

-- "<incident id> <entry id>" on quell_live, delivered when the writing transaction commits.
create function timeline_events_announce() returns trigger language plpgsql as $$
begin
    perform pg_notify('quell_live', new.incident_id::text || ' ' || new.id::text);
    return null;
end
$$;

create trigger timeline_events_announce after insert on timeline_events
    for each row execute function timeline_events_announce();

-- An open event stream: whose, under which session, served by which replica, and until when
-- it counts (the replica renews the lease while the stream is open; a crashed replica's rows
-- stop counting when their lease runs out).
create table live_streams (
    id uuid constraint live_streams_pkey primary key,
    person_id bigint not null constraint live_streams_person_fkey references people (id) on delete cascade,
    session_id text not null,
    -- the person's session epoch when the stream opened: a password change ends the stream
    epoch integer not null,
    replica uuid not null,
    opened_at timestamptz not null default now(),
    lease_until timestamptz not null
);
create index live_streams_person on live_streams (person_id, lease_until);
create index live_streams_replica on live_streams (replica);

-- "I am looking into …": who, since when, renewed until when, released by whom.
create table incident_claims (
    id bigint generated always as identity constraint incident_claims_pkey primary key,
    incident_id bigint not null constraint incident_claims_incident_fkey references incidents (id) on delete cascade,
    person_id bigint not null constraint incident_claims_person_fkey references people (id),
    subject text not null constraint incident_claims_subject_length check (length(subject) between 1 and 200),
    claimed_at timestamptz not null default now(),
    renewed_at timestamptz not null default now(),
    expires_at timestamptz not null,
    released_at timestamptz,
    released_by text,
    constraint incident_claims_expiry_order check (expires_at > claimed_at)
);
create index incident_claims_open on incident_claims (incident_id, expires_at) where released_at is null;

-- The call and the chat channel people meet in: per incident, and a service's defaults that
-- a Sev1 or Sev2 of it starts with.
create table incident_bridges (
    incident_id bigint constraint incident_bridges_pkey primary key
        constraint incident_bridges_incident_fkey references incidents (id) on delete cascade,
    call_url text constraint incident_bridges_call_length check (length(call_url) between 8 and 2000),
    chat_url text constraint incident_bridges_chat_length check (length(chat_url) between 8 and 2000),
    set_by text not null,
    set_at timestamptz not null default now()
);

create table service_bridges (
    service_id bigint constraint service_bridges_pkey primary key
        constraint service_bridges_service_fkey references services (id) on delete cascade,
    call_url text constraint service_bridges_call_length check (length(call_url) between 8 and 2000),
    chat_url text constraint service_bridges_chat_length check (length(chat_url) between 8 and 2000)
);

alter table timeline_events drop constraint timeline_events_kind_check;
alter table timeline_events add constraint timeline_events_kind_check check (kind in (
    'opened', 'acknowledged', 'mitigated', 'resolved', 'reopened', 'severity_changed',
    'role_assigned', 'role_unassigned', 'edited', 'note', 'context', 'stakeholder_update',
    'sla_breached', 'alerts_resolved', 'suspect_verdict', 'related', 'checklist',
    'paged', 'escalation', 'claimed', 'claim_released', 'bridge'));
