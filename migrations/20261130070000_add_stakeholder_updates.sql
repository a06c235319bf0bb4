-- Messages to stakeholders during an incident. Each also stands on the timeline; the cadence of
-- the incident's severity policy asks for one every so often until mitigation.

create table stakeholder_updates (
    id bigint generated always as identity constraint stakeholder_updates_pkey primary key,
    incident_id bigint not null constraint stakeholder_updates_incident_fkey
        references incidents (id) on delete cascade,
    audience text not null constraint stakeholder_updates_audience_check
        check (audience in ('internal', 'executives', 'customers')),
    body text not null constraint stakeholder_updates_body_length check (length(body) between 1 and 10000),
    sent_at timestamptz not null,
    author text not null,
    author_id bigint constraint stakeholder_updates_author_fkey references people (id),
    recorded_at timestamptz not null default now()
);
create index stakeholder_updates_by_incident on stakeholder_updates (incident_id, sent_at);

alter table timeline_events drop constraint timeline_events_kind_check;
alter table timeline_events add constraint timeline_events_kind_check check (kind in (
    'opened', 'acknowledged', 'mitigated', 'resolved', 'reopened', 'severity_changed',
    'role_assigned', 'role_unassigned', 'edited', 'note', 'context', 'stakeholder_update'));
