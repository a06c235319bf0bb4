-- On-call life, part two: a person's own preferences (their time zone, whether they hear about
-- their hand-offs and how many hours ahead they are reminded), and hand-off notices, each sent
-- once: the engine in every replica claims a row per (schedule, instant, person, kind) before
-- it queues the messages, in the same transaction, so replicas racing send one.

create table person_preferences (
    person_id bigint constraint person_preferences_pkey primary key
        constraint person_preferences_person_fkey references people (id) on delete cascade,
    -- an IANA zone name, checked by Quell when written (PostgreSQL's own list can differ)
    time_zone text not null default 'UTC'
        constraint person_preferences_time_zone_length check (length(time_zone) between 1 and 64),
    handoff_notices boolean not null default true,
    -- hours before a shift starts to remind the person; null: no reminder
    handoff_remind_hours integer
        constraint person_preferences_remind_range check (handoff_remind_hours between 1 and 48),
    updated_at timestamptz not null default now()
);

create table handoff_notices (
    schedule_id bigint not null constraint handoff_notices_schedule_fkey
        references schedules (id) on delete cascade,
    -- the hand-off instant (for a reminder, the shift's start it reminds of)
    at timestamptz not null,
    person_id bigint not null constraint handoff_notices_person_fkey references people (id) on delete cascade,
    kind text not null constraint handoff_notices_kind_check check (kind in ('on', 'off', 'reminder')),
    sent_at timestamptz not null default now(),
    -- how many messages were queued (0: the person has no contact method)
    messages integer not null default 0,
    constraint handoff_notices_pkey primary key (schedule_id, at, person_id, kind)
);
create index handoff_notices_person on handoff_notices (person_id, at desc);

-- A hand-off notice is about a schedule, not an incident.
alter table notifications alter column incident_id drop not null;
alter table notifications add column schedule_id bigint
    constraint notifications_schedule_fkey references schedules (id) on delete cascade;
alter table notifications add constraint notifications_about_something
    check (incident_id is not null or schedule_id is not null);
