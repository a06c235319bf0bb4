-- Persisted SLA timers, one per incident and kind, re-armed in the transaction of every change
-- that moves their deadline; the breach each fired deadline produced; and a notification for
-- engines to wake up when a deadline moved.

create table sla_timers (
    id bigint generated always as identity constraint sla_timers_pkey primary key,
    incident_id bigint not null constraint sla_timers_incident_fkey
        references incidents (id) on delete cascade,
    kind text not null constraint sla_timers_kind_check check (kind in ('ack', 'resolve', 'update')),
    due_at timestamptz not null,
    state text not null default 'pending'
        constraint sla_timers_state_check check (state in ('pending', 'fired', 'stopped')),
    fired_at timestamptz,
    updated_at timestamptz not null default now(),
    constraint sla_timers_one_per_kind unique (incident_id, kind)
);
create index sla_timers_due on sla_timers (due_at) where state = 'pending';

create table sla_breaches (
    id bigint generated always as identity constraint sla_breaches_pkey primary key,
    timer_id bigint not null constraint sla_breaches_timer_fkey references sla_timers (id) on delete cascade,
    incident_id bigint not null constraint sla_breaches_incident_fkey
        references incidents (id) on delete cascade,
    kind text not null,
    due_at timestamptz not null,
    breached_at timestamptz not null default now(),
    -- exactly one breach per deadline, whatever the engines do
    constraint sla_breaches_once unique (timer_id, due_at)
);
create index sla_breaches_by_incident on sla_breaches (incident_id);

alter table timeline_events drop constraint timeline_events_kind_check;
alter table timeline_events add constraint timeline_events_kind_check check (kind in (
    'opened', 'acknowledged', 'mitigated', 'resolved', 'reopened', 'severity_changed',
    'role_assigned', 'role_unassigned', 'edited', 'note', 'context', 'stakeholder_update',
    'sla_breached'));
