-- Alerts as received, deduplicated and grouped. One open alert per dedup key per integration
-- and one open group per group key per integration, both enforced here, so replicas and
-- retrying senders cannot double them. Incidents are never updated once per alert: the count
-- is read from this table.
create table alert_groups (
    id bigint generated always as identity constraint alert_groups_pkey primary key,
    integration_id uuid not null constraint alert_groups_integration_fkey references integrations (id),
    group_key text not null,
    -- set in the transaction that inserts the group
    incident_id bigint constraint alert_groups_incident_fkey references incidents (id) on delete cascade,
    opened_at timestamptz not null default now(),
    closed_at timestamptz
);
create unique index alert_groups_one_open on alert_groups (integration_id, group_key)
    where closed_at is null;
create index alert_groups_by_incident on alert_groups (incident_id);

create table alerts (
    id bigint generated always as identity constraint alerts_pkey primary key,
    integration_id uuid not null constraint alerts_integration_fkey references integrations (id),
    group_id bigint not null constraint alerts_group_fkey references alert_groups (id) on delete cascade,
    incident_id bigint not null constraint alerts_incident_fkey references incidents (id) on delete cascade,
    dedup_key text not null,
    status text not null constraint alerts_status_check
        check (status in ('firing', 'acknowledged', 'resolved')),
    summary text not null,
    source text not null default '',
    -- the sender's own word (critical, warning, …), as given
    severity text not null default '',
    labels jsonb not null default '{}',
    -- annotations, custom_details or metadata, by format
    details jsonb not null default '{}',
    source_url text,
    starts_at timestamptz,
    received_at timestamptz not null default now(),
    last_received_at timestamptz not null default now(),
    -- how many deliveries joined this alert (retries, HA pairs, repeat intervals)
    deliveries integer not null default 1,
    resolved_at timestamptz,
    -- 'sender' when the source resolved it, 'incident' when its incident was resolved
    resolved_by text constraint alerts_resolved_by_check check (resolved_by in ('sender', 'incident')),
    rule_id bigint constraint alerts_rule_fkey references routing_rules (id) on delete set null,
    -- what routing decided for this alert: service, severity, title, rule name
    routed jsonb not null default '{}',
    raw jsonb not null,
    constraint alerts_resolved_stamp check ((status = 'resolved') = (resolved_at is not null))
);
create unique index alerts_one_open on alerts (integration_id, dedup_key) where status <> 'resolved';
create index alerts_by_incident on alerts (incident_id, id);
create index alerts_by_received on alerts (received_at);

alter table timeline_events drop constraint timeline_events_kind_check;
alter table timeline_events add constraint timeline_events_kind_check check (kind in (
    'opened', 'acknowledged', 'mitigated', 'resolved', 'reopened', 'severity_changed',
    'role_assigned', 'role_unassigned', 'edited', 'note', 'context', 'stakeholder_update',
    'sla_breached', 'alerts_resolved'));
