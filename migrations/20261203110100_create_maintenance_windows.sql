-- Maintenance windows: planned work on services. While one lasts, its services' alerts are
-- held (mode 'silence') or open incidents that page nobody (mode 'quiet').
create table maintenance_windows (
    id bigint generated always as identity constraint maintenance_windows_pkey primary key,
    name text not null constraint maintenance_windows_name_check check (length(btrim(name)) between 1 and 200),
    mode text not null constraint maintenance_windows_mode_check check (mode in ('silence', 'quiet')),
    -- the first occurrence's start, on the wall clock of time_zone
    local_start timestamp not null,
    time_zone text not null,
    duration_minutes integer not null constraint maintenance_windows_duration_check
        check (duration_minutes between 1 and 10080),
    -- weekly: again every week on these ISO weekdays (1 = Monday) at local_start's time of day
    weekly boolean not null default false,
    weekdays smallint[] not null default '{}',
    -- the last day (in time_zone) a weekly window may start on; none: for ever
    repeat_until date,
    comment text not null default '',
    created_by text not null,
    -- the next start or end the engine writes on the timeline of the incidents it touches
    next_edge_at timestamptz,
    next_edge text constraint maintenance_windows_edge_check check (next_edge in ('start', 'end')),
    -- the occurrence that edge belongs to
    edge_occurrence timestamptz,
    -- ended by a person before its time: it applies no more from then
    cancelled_at timestamptz,
    cancelled_by text,
    version integer not null default 1,
    created_at timestamptz not null default now(),
    updated_at timestamptz not null default now()
);
create index maintenance_windows_due on maintenance_windows (next_edge_at) where next_edge_at is not null;

create table maintenance_window_services (
    window_id bigint not null constraint maintenance_window_services_window_fkey
        references maintenance_windows (id) on delete cascade,
    service_id bigint not null constraint maintenance_window_services_service_fkey
        references services (id) on delete cascade,
    constraint maintenance_window_services_pkey primary key (window_id, service_id)
);
create index maintenance_window_services_service on maintenance_window_services (service_id);

-- Moved by every change to windows (and their services), like silence_revision.
create table maintenance_revision (
    id boolean primary key default true constraint maintenance_revision_one check (id),
    n bigint not null default 0
);
insert into maintenance_revision (id) values (true);
create function maintenance_changed() returns trigger language plpgsql as $$
begin
    update maintenance_revision set n = n + 1;
    perform pg_notify('quell_maintenance', '');
    return null;
end $$;
create trigger maintenance_windows_changed after insert or update of name, mode, local_start,
    time_zone, duration_minutes, weekly, weekdays, repeat_until, cancelled_at or delete
    on maintenance_windows for each statement execute function maintenance_changed();
create trigger maintenance_window_services_changed after insert or update or delete
    on maintenance_window_services for each statement execute function maintenance_changed();
-- The lanes know a window's services by name: a renamed service moves the revision too.
create trigger maintenance_services_renamed after update of name
    on services for each statement execute function maintenance_changed();

-- Whether a window is between occurrences (its next edge is not the end of one going on, nor
-- a start already due): what it held or kept quiet then is handed back by the sweeps.
create function maintenance_window_idle(next_edge text, next_edge_at timestamptz)
returns boolean
language sql stable parallel safe as $$
    select next_edge is distinct from 'end'
           and not coalesce(next_edge = 'start' and next_edge_at <= now(), false)
$$;

-- An alert a window held is stored like one a silence held.
alter table silenced_alerts alter column silence_id drop not null;
alter table silenced_alerts add column window_id bigint
    constraint silenced_alerts_window_fkey references maintenance_windows (id) on delete cascade;
alter table silenced_alerts add constraint silenced_alerts_held_by
    check ((silence_id is null) <> (window_id is null));
create index silenced_alerts_window on silenced_alerts (window_id) where window_id is not null;

-- An incident a quiet window opened without paging, and an alert that joined during one.
alter table alerts add column window_id bigint
    constraint alerts_window_fkey references maintenance_windows (id) on delete set null;
create table incident_quiet (
    incident_id bigint constraint incident_quiet_pkey primary key
        constraint incident_quiet_incident_fkey references incidents (id) on delete cascade,
    window_id bigint not null constraint incident_quiet_window_fkey
        references maintenance_windows (id) on delete cascade,
    -- when the window's end started the escalation it held (still triggered then)
    paged_at timestamptz
);
create index incident_quiet_window on incident_quiet (window_id);

-- What a held alert's sender said of it that routing keeps when it is handed back.
alter table silenced_alerts add column source_url text;
alter table silenced_alerts add column starts_at timestamptz;
