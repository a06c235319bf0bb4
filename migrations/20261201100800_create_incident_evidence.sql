-- Evidence attached to incidents, each item keeping its source: pasted code, chat and tickets,
-- chat imported from a Slack export, tickets from a Linear or Jira export, files read from a git
-- repository at the commit before the incident started. Challenges are built from these.
create table incident_evidence (
    id bigint generated always as identity constraint incident_evidence_pkey primary key,
    incident_id bigint not null constraint incident_evidence_incident_fkey references incidents (id) on delete cascade,
    kind text not null constraint incident_evidence_kind_check check (kind in ('code', 'chat', 'ticket', 'metric')),
    title text not null constraint incident_evidence_title_length check (length(title) between 1 and 200),
    body text not null constraint incident_evidence_body_length check (length(body) between 1 and 50000),
    source jsonb not null default '{}' constraint incident_evidence_source_object check (jsonb_typeof(source) = 'object'),
    origin text not null constraint incident_evidence_origin_check check (origin in ('pasted', 'slack', 'linear', 'jira', 'git')),
    added_by text not null,
    added_at timestamptz not null default now()
);
create index incident_evidence_by_incident on incident_evidence (incident_id, id);

-- An uploaded export, parsed and held while someone picks what to attach (a day at most).
create table evidence_imports (
    id bigint generated always as identity constraint evidence_imports_pkey primary key,
    incident_id bigint not null constraint evidence_imports_incident_fkey references incidents (id) on delete cascade,
    format text not null constraint evidence_imports_format_check check (format in ('slack', 'linear', 'jira')),
    file_name text not null default '',
    created_by text not null,
    created_at timestamptz not null default now()
);
create index evidence_imports_by_age on evidence_imports (created_at);

-- Its messages (channel, author, time, text) or tickets (key, title, created, text), numbered
-- in the order the export gave them.
create table evidence_import_rows (
    import_id bigint not null constraint evidence_import_rows_import_fkey references evidence_imports (id) on delete cascade,
    n integer not null,
    channel text not null default '',
    author text not null default '',
    key text not null default '',
    title text not null default '',
    at timestamptz,
    body text not null,
    constraint evidence_import_rows_pkey primary key (import_id, n)
);
create index evidence_import_rows_by_channel on evidence_import_rows (import_id, channel, at);
