-- Shift swaps: a person on call offers part of their shift in a schedule, to a named person or
-- to anyone who can take it; taken, it becomes an override of the schedule (the taker in the
-- offerer's place for that period), in the same transaction, so it shows on both people's
-- calendars. The offer keeps who offered, who took it and the override it became.
create table shift_swaps (
    id bigint generated always as identity constraint shift_swaps_pkey primary key,
    schedule_id bigint not null constraint shift_swaps_schedule_fkey references schedules (id) on delete cascade,
    offered_by bigint not null constraint shift_swaps_offered_by_fkey references people (id) on delete cascade,
    -- the person asked to take it; null: anyone who can take it
    offered_to bigint constraint shift_swaps_offered_to_fkey references people (id) on delete cascade,
    starts_at timestamptz not null,
    ends_at timestamptz not null,
    message text not null default '' constraint shift_swaps_message_length check (length(message) <= 1000),
    state text not null default 'offered'
        constraint shift_swaps_state_check check (state in ('offered', 'taken', 'withdrawn')),
    taken_by bigint constraint shift_swaps_taken_by_fkey references people (id) on delete set null,
    taken_at timestamptz,
    created_at timestamptz not null default now(),
    constraint shift_swaps_period check (ends_at > starts_at),
    constraint shift_swaps_not_to_self check (offered_to is null or offered_to <> offered_by)
);
create index shift_swaps_schedule on shift_swaps (schedule_id, starts_at) where state = 'offered';
