-- Changes as first-class records of a service: deploys, configuration changes, feature flags and
-- infrastructure, from the API or from PagerDuty change events, so incidents can rank them as
-- suspects. The raw change_events rows move here (their service from custom_details.service when
-- it names one), and that table goes.
create table changes (
    id bigint generated always as identity constraint changes_pkey primary key,
    -- null only for a sender's change that named no known service
    service_id bigint constraint changes_service_fkey references services (id) on delete cascade,
    environment text not null default 'production'
        constraint changes_environment_length check (length(environment) between 1 and 40),
    kind text not null default 'deploy'
        constraint changes_kind_check check (kind in ('deploy', 'config', 'feature_flag', 'infrastructure')),
    summary text not null constraint changes_summary_length check (length(summary) between 1 and 1024),
    author text not null default '',
    link text not null default '',
    occurred_at timestamptz not null,
    recorded_at timestamptz not null default now(),
    details jsonb not null default '{}',
    -- set when a sender reported it, with what it sent
    integration_id uuid constraint changes_integration_fkey references integrations (id) on delete set null,
    raw jsonb
);
create index changes_by_time on changes (occurred_at desc, id desc);
create index changes_by_service on changes (service_id, occurred_at desc, id desc);

insert into changes (service_id, kind, summary, author, link, occurred_at, recorded_at, details,
                     integration_id, raw)
select s.id,
       case when c.details->>'kind' in ('deploy', 'config', 'feature_flag', 'infrastructure')
            then c.details->>'kind' else 'deploy' end,
       left(c.summary, 1024), left(c.source, 200),
       coalesce(case when c.links->0->>'href' ~ '^https?://' then c.links->0->>'href' end, ''),
       c.occurred_at, c.received_at, c.details, c.integration_id, c.raw
from change_events c
left join services s on s.name = c.details->>'service'
where length(c.summary) > 0
order by c.id;

drop table change_events;
