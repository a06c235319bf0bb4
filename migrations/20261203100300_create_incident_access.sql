-- Private incidents: an incident restricted to named teams and people is seen only by them
-- (and by admins, who must be able to mend its access). `incident_visible` is the one rule
-- every read of incidents for a person goes through; a null viewer is the engines' and the
-- aggregates' "everyone".
alter table incidents add column restricted boolean not null default false;

create table incident_access (
    id bigint generated always as identity constraint incident_access_pkey primary key,
    incident_id bigint not null
        constraint incident_access_incident_fkey references incidents (id) on delete cascade,
    team_id bigint constraint incident_access_team_fkey references teams (id) on delete cascade,
    person_id bigint
        constraint incident_access_person_fkey references people (id) on delete cascade,
    granted_by text not null,
    granted_at timestamptz not null default now(),
    constraint incident_access_one_grantee check ((team_id is null) <> (person_id is null))
);
create unique index incident_access_team_key on incident_access (incident_id, team_id)
    where team_id is not null;
create unique index incident_access_person_key on incident_access (incident_id, person_id)
    where person_id is not null;
create index incident_access_team on incident_access (team_id) where team_id is not null;
create index incident_access_person on incident_access (person_id) where person_id is not null;

create function incident_visible(restricted boolean, incident bigint, viewer bigint)
returns boolean
language sql stable parallel safe as $$
    select not restricted
        or viewer is null
        or exists (select 1 from incident_access a
                   where a.incident_id = incident and a.person_id = viewer)
        or exists (select 1 from incident_access a
                   join team_members m on m.team_id = a.team_id
                   where a.incident_id = incident and m.person_id = viewer)
$$;

alter table timeline_events drop constraint timeline_events_kind_check;
alter table timeline_events add constraint timeline_events_kind_check check (kind in (
    'opened', 'acknowledged', 'mitigated', 'resolved', 'reopened', 'severity_changed',
    'role_assigned', 'role_unassigned', 'edited', 'note', 'context', 'stakeholder_update',
    'sla_breached', 'alerts_resolved', 'suspect_verdict', 'related', 'checklist',
    'paged', 'escalation', 'claimed', 'claim_released', 'bridge', 'access'));
