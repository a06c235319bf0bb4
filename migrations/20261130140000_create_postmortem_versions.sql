-- Published versions of postmortems, frozen: the document as Markdown and its computed figures at
-- the moment of publication. A later edit leaves them as they were.
create table postmortem_versions (
    id bigint generated always as identity constraint postmortem_versions_pkey primary key,
    postmortem_id bigint not null constraint postmortem_versions_postmortem_fkey
        references postmortems (id) on delete cascade,
    number integer not null,
    published_at timestamptz not null default now(),
    published_by text not null,
    markdown text not null,
    figures jsonb not null,
    constraint postmortem_versions_number_key unique (postmortem_id, number)
);
