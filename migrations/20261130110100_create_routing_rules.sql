-- Ordered routing rules: conditions on an alert's fields decide the service, severity and
-- title of the incident it opens. First match wins; the default rule (no conditions) is last.
create table routing_rules (
    id bigint generated always as identity constraint routing_rules_pkey primary key,
    position integer not null,
    name text not null constraint routing_rules_name_length check (length(name) between 1 and 100),
    -- each condition as written, e.g. "labels.severity = critical", "checkout_success_rate < 90"
    conditions jsonb not null default '[]'
        constraint routing_rules_conditions_array check (jsonb_typeof(conditions) = 'array'),
    -- a service name, or a template such as "{labels.service}"; empty: no service
    service text not null default '',
    -- Sev1..Sev4, or null: from the alert's own severity
    severity text constraint routing_rules_severity_check
        check (severity in ('Sev1', 'Sev2', 'Sev3', 'Sev4')),
    -- e.g. "{labels.alertname} on {labels.service}"; empty: the alert's summary
    title_template text not null default '',
    is_default boolean not null default false,
    version integer not null default 1,
    created_at timestamptz not null default now(),
    updated_at timestamptz not null default now(),
    constraint routing_rules_default_has_no_conditions
        check (not is_default or conditions = '[]'::jsonb)
);
create unique index routing_rules_one_default on routing_rules (is_default) where is_default;

insert into routing_rules (position, name, is_default) values (1000000, 'Default', true);
