-- Held uploads count against a quota, per person and for the installation: who uploaded each
-- (their account, while it exists) and how many bytes it holds (its text, and 128 a row for
-- what a row costs beside its text).
alter table evidence_imports
    add column person_id bigint constraint evidence_imports_person_fkey references people (id) on delete set null,
    add column kept_bytes bigint not null default 0
        constraint evidence_imports_kept_bytes_check check (kept_bytes >= 0);

update evidence_imports i
set kept_bytes = coalesce((
    select sum(octet_length(r.channel) + octet_length(r.author) + octet_length(r.key)
               + octet_length(r.title) + octet_length(r.body) + 128)
    from evidence_import_rows r where r.import_id = i.id), 0);

create index evidence_imports_by_person on evidence_imports (person_id, created_at);
