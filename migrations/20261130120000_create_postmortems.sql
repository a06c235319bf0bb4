-- Postmortems: one per incident, its text sections in Markdown, the impact figures it needs for
-- the error budget, the timeline events it chose, and its action items. Figures (durations,
-- verdicts, budget) are never stored here: they are computed from the incident's timestamps.
create table postmortems (
    id bigint generated always as identity constraint postmortems_pkey primary key,
    incident_id bigint not null constraint postmortems_incident_key unique
        constraint postmortems_incident_fkey references incidents (id) on delete cascade,
    status text not null default 'draft'
        constraint postmortems_status_check check (status in ('draft', 'in_review', 'published')),
    -- what the service's failure impacted, e.g. "checkout"
    impacted text not null default '',
    summary text not null default '',
    impact text not null default '',
    -- what failed, e.g. "Authorization requests"; and how many of how many in the impact window
    requests_label text not null default 'Requests',
    failed_requests bigint constraint postmortems_failed_nonnegative check (failed_requests >= 0),
    total_requests bigint constraint postmortems_total_covers_failed
        check (total_requests is null or failed_requests is null or total_requests >= failed_requests),
    root_cause text not null default '',
    contributing_factors text not null default '',
    detection text not null default '',
    went_well text not null default '',
    was_hard text not null default '',
    got_lucky text not null default '',
    lessons text not null default '',
    -- the timeline events the document shows, in order; null: the default choice
    timeline_event_ids bigint[],
    -- the timeline event of the change that triggered the incident, for "time to detect from
    -- the change"; null while no change is named
    trigger_event_id bigint constraint postmortems_trigger_fkey references timeline_events (id)
        on delete set null,
    version integer not null default 1,
    created_at timestamptz not null default now(),
    updated_at timestamptz not null default now(),
    published_at timestamptz
);

create table action_items (
    id bigint generated always as identity constraint action_items_pkey primary key,
    postmortem_id bigint not null constraint action_items_postmortem_fkey
        references postmortems (id) on delete cascade,
    -- the item's number within its postmortem
    number integer not null,
    action text not null constraint action_items_action_length check (length(action) between 1 and 2000),
    type text not null constraint action_items_type_check
        check (type in ('prevent', 'detect', 'mitigate', 'process')),
    owner_id bigint constraint action_items_owner_fkey references people (id),
    due_on date,
    work_item text not null default '',
    status text not null default 'open'
        constraint action_items_status_check check (status in ('open', 'in_progress', 'done', 'wont_do')),
    created_at timestamptz not null default now(),
    updated_at timestamptz not null default now(),
    constraint action_items_number_key unique (postmortem_id, number)
);
create index action_items_by_owner on action_items (owner_id, status);
