-- Alert sources. Each has its own secret key, stored as its SHA-256 and compared in constant
-- time; a generic integration may also verify Standard Webhooks signatures, which needs the
-- signing secret itself (HMAC cannot be checked against a hash), so that one is stored as given.
create table integrations (
    id uuid constraint integrations_pkey primary key default gen_random_uuid(),
    name text not null constraint integrations_name_key unique
        constraint integrations_name_length check (length(name) between 1 and 100),
    format text not null constraint integrations_format_check
        check (format in ('alertmanager', 'grafana', 'pagerduty-events-v2', 'generic')),
    key_hash bytea not null constraint integrations_key_hash_key unique,
    key_prefix text not null,
    signing_secret text,
    -- what happens to the incident when every one of its alerts has resolved
    on_all_resolved text not null default 'mitigate'
        constraint integrations_on_all_resolved_check
        check (on_all_resolved in ('mitigate', 'resolve', 'nothing')),
    enabled boolean not null default true,
    version integer not null default 1,
    created_at timestamptz not null default now(),
    updated_at timestamptz not null default now(),
    key_rotated_at timestamptz not null default now()
);
