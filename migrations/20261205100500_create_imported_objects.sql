-- What an import from another tool (PagerDuty) made in Quell: one row per object of theirs,
-- naming what it became and a digest of what it was made from, so running the import again
-- changes nothing, and after a change on their side updates what it made.
create table imported_objects (
    vendor text not null constraint imported_objects_vendor_check check (vendor in ('pagerduty', 'opsgenie')),
    -- user, schedule, escalation_policy, service, integration
    kind text not null,
    external_id text not null,
    -- the person's, schedule's, policy's or service's id, or the integration's uuid
    quell_id text not null,
    digest text not null,
    imported_at timestamptz not null default now(),
    updated_at timestamptz not null default now(),
    constraint imported_objects_pkey primary key (vendor, kind, external_id)
);
