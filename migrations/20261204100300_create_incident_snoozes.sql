-- Snoozes: an acknowledged incident put aside until a time; at its end, still acknowledged,
-- it returns to triggered and its escalation pages again.
create table incident_snoozes (
    incident_id bigint not null constraint incident_snoozes_pkey primary key
        constraint incident_snoozes_incident_fkey references incidents (id) on delete cascade,
    until timestamptz not null,
    snoozed_by text not null,
    note text not null default '',
    created_at timestamptz not null default now(),
    -- when the engine woke it (or found it resolved meanwhile)
    ended_at timestamptz
);
create index incident_snoozes_due on incident_snoozes (until) where ended_at is null;

create function incident_snoozes_changed() returns trigger language plpgsql as $$
begin
    perform pg_notify('quell_snoozes', '');
    return null;
end $$;
create trigger incident_snoozes_changed after insert or update of until on incident_snoozes
    for each statement execute function incident_snoozes_changed();
