-- Core of Quell: services, people, incidents, their roles and their timelines, and the
-- idempotency keys that make REST creates safe to retry.

create table services (
    id bigint generated always as identity constraint services_pkey primary key,
    name text not null constraint services_name_key unique
        constraint services_name_format check (name ~ '^[a-z0-9][a-z0-9-]{0,62}$'),
    tier smallint not null constraint services_tier_range check (tier between 1 and 3),
    team text not null default '',
    description text not null default '',
    slo_target_percent double precision
        constraint services_slo_range check (slo_target_percent > 0 and slo_target_percent < 100),
    avg_requests_per_second double precision
        constraint services_rate_positive check (avg_requests_per_second >= 0),
    runbook_url text,
    version integer not null default 1,
    created_at timestamptz not null default now(),
    updated_at timestamptz not null default now()
);

create table people (
    id bigint generated always as identity constraint people_pkey primary key,
    name text not null,
    email text not null,
    handle text not null,
    created_at timestamptz not null default now(),
    constraint people_handle_format check (handle ~ '^[a-z0-9][a-z0-9._-]{0,39}$')
);
create unique index people_email_key on people (lower(email));
create unique index people_handle_key on people (handle);

create sequence incident_number_seq as bigint start with 1;

create table incidents (
    id bigint generated always as identity constraint incidents_pkey primary key,
    number bigint not null default nextval('incident_number_seq')
        constraint incidents_number_key unique,
    title text not null constraint incidents_title_length check (length(title) between 1 and 200),
    severity text not null constraint incidents_severity_check
        check (severity in ('Sev1', 'Sev2', 'Sev3', 'Sev4')),
    status text not null constraint incidents_status_check
        check (status in ('triggered', 'acknowledged', 'mitigated', 'resolved')),
    service_id bigint constraint incidents_service_fkey references services (id),
    summary text not null default '',
    impact text not null default '',
    started_at timestamptz not null,
    detected_at timestamptz not null,
    acknowledged_at timestamptz,
    mitigated_at timestamptz,
    resolved_at timestamptz,
    version integer not null default 1,
    created_at timestamptz not null default now(),
    updated_at timestamptz not null default now(),
    constraint incidents_started_before_detected check (started_at <= detected_at),
    constraint incidents_ack_after_detect check (acknowledged_at is null or acknowledged_at >= detected_at),
    constraint incidents_mitigate_after_ack check (
        mitigated_at is null or (acknowledged_at is not null and mitigated_at >= acknowledged_at)),
    constraint incidents_resolve_after_mitigate check (
        resolved_at is null or (mitigated_at is not null and resolved_at >= mitigated_at)),
    constraint incidents_status_stamps check (
        (status = 'triggered' and acknowledged_at is null and mitigated_at is null and resolved_at is null)
        or (status = 'acknowledged' and acknowledged_at is not null and mitigated_at is null and resolved_at is null)
        or (status = 'mitigated' and mitigated_at is not null and resolved_at is null)
        or (status = 'resolved' and resolved_at is not null))
);
alter sequence incident_number_seq owned by incidents.number;
create index incidents_list_order on incidents ((status = 'resolved'), severity, number desc);
create index incidents_service on incidents (service_id);

create table incident_roles (
    incident_id bigint not null constraint incident_roles_incident_fkey
        references incidents (id) on delete cascade,
    role text not null constraint incident_roles_role_check
        check (role in ('incident_commander', 'comms_lead', 'scribe', 'postmortem_owner')),
    person_id bigint not null constraint incident_roles_person_fkey references people (id),
    assigned_at timestamptz not null,
    constraint incident_roles_pkey primary key (incident_id, role)
);

create table timeline_events (
    id bigint generated always as identity constraint timeline_events_pkey primary key,
    incident_id bigint not null constraint timeline_events_incident_fkey
        references incidents (id) on delete cascade,
    occurred_at timestamptz not null,
    recorded_at timestamptz not null default now(),
    kind text not null constraint timeline_events_kind_check check (kind in (
        'opened', 'acknowledged', 'mitigated', 'resolved', 'reopened', 'severity_changed',
        'role_assigned', 'role_unassigned', 'edited', 'note', 'context')),
    author text not null,
    body text not null default '',
    details jsonb not null default '{}',
    -- the incident's version right after this event; null for notes, which never conflict
    incident_version integer
);
create index timeline_events_by_incident on timeline_events (incident_id, occurred_at, id);

create table idempotency_keys (
    scope text not null,
    key text not null,
    request jsonb not null,
    response_status smallint,
    response_body jsonb,
    created_at timestamptz not null default now(),
    constraint idempotency_keys_pkey primary key (scope, key)
);
