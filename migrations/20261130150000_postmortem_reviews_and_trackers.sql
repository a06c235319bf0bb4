-- Reviewers' comments on a postmortem's parts, the work-item trackers whose link templates turn
-- `AB#2311` into a link, and a version per action item so two edits cannot silently cross.

create table postmortem_comments (
    id bigint generated always as identity constraint postmortem_comments_pkey primary key,
    postmortem_id bigint not null constraint postmortem_comments_postmortem_fkey
        references postmortems (id) on delete cascade,
    -- a text section, or the computed parts: figures, timeline, action_items
    part text not null constraint postmortem_comments_part_check check (part in (
        'summary', 'impact', 'figures', 'timeline', 'root_cause', 'contributing_factors',
        'detection', 'went_well', 'was_hard', 'got_lucky', 'action_items', 'lessons')),
    author_id bigint constraint postmortem_comments_author_fkey references people (id),
    author_name text not null,
    body text not null constraint postmortem_comments_body_length check (length(body) between 1 and 4000),
    created_at timestamptz not null default now(),
    resolved_at timestamptz,
    resolved_by text
);
create index postmortem_comments_by_postmortem on postmortem_comments (postmortem_id, created_at);

create table work_item_trackers (
    id bigint generated always as identity constraint work_item_trackers_pkey primary key,
    -- what a work item starts with before its number: `AB#`, `LIN-`, `JIRA-`
    prefix text not null constraint work_item_trackers_prefix_check
        check (prefix ~ '^[A-Za-z][A-Za-z0-9_]{0,19}[#-]$'),
    name text not null constraint work_item_trackers_name_length check (length(name) between 1 and 100),
    -- an http(s) URL with `{n}` where the number goes
    url_template text not null constraint work_item_trackers_url_check
        check (url_template ~ '^https?://' and position('{n}' in url_template) > 0),
    created_at timestamptz not null default now(),
    updated_at timestamptz not null default now()
);
create unique index work_item_trackers_prefix_key on work_item_trackers (upper(prefix));

alter table action_items add column version integer not null default 1;
