-- Runbooks: a named link and an ordered checklist per service or per routing rule, and each
-- incident's checks of their steps (who, when; the step's text as it was checked).
create table runbooks (
    id bigint generated always as identity constraint runbooks_pkey primary key,
    name text not null constraint runbooks_name_length check (length(name) between 1 and 100),
    link text not null default '' constraint runbooks_link_length check (length(link) <= 2000),
    service_id bigint constraint runbooks_service_fkey references services (id) on delete cascade,
    rule_id bigint constraint runbooks_rule_fkey references routing_rules (id) on delete cascade,
    steps text[] not null default '{}'
        constraint runbooks_steps_count check (cardinality(steps) <= 50),
    version integer not null default 1,
    created_at timestamptz not null default now(),
    updated_at timestamptz not null default now(),
    constraint runbooks_one_owner check ((service_id is null) <> (rule_id is null))
);
create index runbooks_by_service on runbooks (service_id) where service_id is not null;
create index runbooks_by_rule on runbooks (rule_id) where rule_id is not null;

-- A check belongs to the step at its position; editing a runbook keeps checks of the positions
-- that remain, and the text here says what was checked.
create table checklist_checks (
    incident_id bigint not null
        constraint checklist_checks_incident_fkey references incidents (id) on delete cascade,
    runbook_id bigint not null
        constraint checklist_checks_runbook_fkey references runbooks (id) on delete cascade,
    position integer not null constraint checklist_checks_position_check check (position >= 0),
    step text not null,
    checked_by text not null,
    checked_at timestamptz not null default now(),
    constraint checklist_checks_pkey primary key (incident_id, runbook_id, position)
);

alter table timeline_events drop constraint timeline_events_kind_check;
alter table timeline_events add constraint timeline_events_kind_check check (kind in (
    'opened', 'acknowledged', 'mitigated', 'resolved', 'reopened', 'severity_changed',
    'role_assigned', 'role_unassigned', 'edited', 'note', 'context', 'stakeholder_update',
    'sla_breached', 'alerts_resolved', 'suspect_verdict', 'related', 'checklist'));
