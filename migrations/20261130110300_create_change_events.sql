-- Deploys and configuration changes as senders report them (PagerDuty change events), kept raw
-- so incidents can later rank them as suspects.
create table change_events (
    id bigint generated always as identity constraint change_events_pkey primary key,
    integration_id uuid not null constraint change_events_integration_fkey references integrations (id),
    summary text not null,
    source text not null default '',
    occurred_at timestamptz not null,
    received_at timestamptz not null default now(),
    details jsonb not null default '{}',
    links jsonb not null default '[]',
    raw jsonb not null
);
create index change_events_by_time on change_events (occurred_at);
