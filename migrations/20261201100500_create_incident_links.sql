-- Related incidents: a link between two incidents with a note, one row however it was made
-- (the lower id first), shown on both.
create table incident_links (
    incident_id bigint not null
        constraint incident_links_incident_fkey references incidents (id) on delete cascade,
    related_id bigint not null
        constraint incident_links_related_fkey references incidents (id) on delete cascade,
    note text not null default '' constraint incident_links_note_length check (length(note) <= 1000),
    linked_by text not null,
    linked_at timestamptz not null default now(),
    constraint incident_links_pkey primary key (incident_id, related_id),
    constraint incident_links_order check (incident_id < related_id)
);
create index incident_links_by_related on incident_links (related_id);

alter table timeline_events drop constraint timeline_events_kind_check;
alter table timeline_events add constraint timeline_events_kind_check check (kind in (
    'opened', 'acknowledged', 'mitigated', 'resolved', 'reopened', 'severity_changed',
    'role_assigned', 'role_unassigned', 'edited', 'note', 'context', 'stakeholder_update',
    'sla_breached', 'alerts_resolved', 'suspect_verdict', 'related'));
