-- What responders decided about the changes suspected of causing an incident: suspected, ruled
-- out, or confirmed as the trigger (at most one per incident). The confirmed trigger is the
-- source of "time to detect from the change"; it replaces the postmortem's hand-picked timeline
-- event, whose choices move here as change records of the incident's service.
create table suspect_verdicts (
    incident_id bigint not null
        constraint suspect_verdicts_incident_fkey references incidents (id) on delete cascade,
    change_id bigint not null
        constraint suspect_verdicts_change_fkey references changes (id) on delete cascade,
    verdict text not null
        constraint suspect_verdicts_verdict_check check (verdict in ('suspected', 'ruled_out', 'confirmed_trigger')),
    decided_by text not null,
    decided_at timestamptz not null default now(),
    constraint suspect_verdicts_pkey primary key (incident_id, change_id)
);
create unique index suspect_verdicts_one_trigger on suspect_verdicts (incident_id)
    where verdict = 'confirmed_trigger';

alter table timeline_events drop constraint timeline_events_kind_check;
alter table timeline_events add constraint timeline_events_kind_check check (kind in (
    'opened', 'acknowledged', 'mitigated', 'resolved', 'reopened', 'severity_changed',
    'role_assigned', 'role_unassigned', 'edited', 'note', 'context', 'stakeholder_update',
    'sla_breached', 'alerts_resolved', 'suspect_verdict'));

-- A postmortem's hand-picked triggering event becomes a change of the incident's service,
-- confirmed as its trigger.
with picked as (
    select pm.incident_id, i.service_id, e.occurred_at, e.body, e.author
    from postmortems pm
    join timeline_events e on e.id = pm.trigger_event_id
    join incidents i on i.id = pm.incident_id
    where i.service_id is not null and length(trim(e.body)) > 0
),
made as (
    insert into changes (service_id, kind, summary, author, occurred_at, details)
    select service_id, 'deploy', left(trim(body), 1024), left(author, 200), occurred_at,
           jsonb_build_object('from_postmortem_of_incident', incident_id)
    from picked
    returning id, (details->>'from_postmortem_of_incident')::bigint as incident_id
)
insert into suspect_verdicts (incident_id, change_id, verdict, decided_by)
select incident_id, id, 'confirmed_trigger', 'migration' from made;

alter table postmortems drop column trigger_event_id;
