-- An incident's alerts gathered by summary, kept as they change instead of counted on every
-- view: a storm incident of 50,000 alerts is a few rows here. Statement-level triggers with
-- transition tables keep it: an ingest batch (one statement for many alerts) updates each
-- (incident, summary) row once, however many alerts it carried; every other writer of alerts
-- (resolving, closing with the incident, moving a group) is caught the same way.
create table alert_summaries (
    incident_id bigint not null constraint alert_summaries_incident_fkey
        references incidents (id) on delete cascade,
    summary text not null,
    total bigint not null,
    open bigint not null,
    first_received_at timestamptz not null,
    last_received_at timestamptz not null,
    source_url text,
    severity text not null,
    constraint alert_summaries_pkey primary key (incident_id, summary)
);

insert into alert_summaries (incident_id, summary, total, open, first_received_at,
                             last_received_at, source_url, severity)
select incident_id, summary, count(*), count(*) filter (where status <> 'resolved'),
       min(received_at), max(last_received_at), max(source_url), max(severity)
from alerts group by incident_id, summary;

-- Adds the change of one statement: rows (incident_id, summary, total, open, first, last,
-- source_url, severity) with signed counts. Upserts in key order, so two batches touching the
-- same summaries lock them in the same order and never deadlock; rows left with no alerts go.
create function alert_summaries_apply(deltas jsonb) returns void language plpgsql as $$
begin
    insert into alert_summaries as s (incident_id, summary, total, open, first_received_at,
                                      last_received_at, source_url, severity)
    select d.incident_id, d.summary, d.total, d.open, d.first_received_at, d.last_received_at,
           d.source_url, d.severity
    from jsonb_to_recordset(deltas) as d(incident_id bigint, summary text, total bigint,
                                         open bigint, first_received_at timestamptz,
                                         last_received_at timestamptz, source_url text,
                                         severity text)
    order by d.incident_id, d.summary
    on conflict (incident_id, summary) do update
    set total = s.total + excluded.total,
        open = s.open + excluded.open,
        first_received_at = least(s.first_received_at, excluded.first_received_at),
        last_received_at = greatest(s.last_received_at, excluded.last_received_at),
        source_url = greatest(s.source_url, excluded.source_url),
        severity = greatest(s.severity, excluded.severity);
    delete from alert_summaries s
    using jsonb_to_recordset(deltas) as d(incident_id bigint, summary text)
    where s.incident_id = d.incident_id and s.summary = d.summary and s.total <= 0;
end $$;

create function alert_summaries_inserted() returns trigger language plpgsql as $$
begin
    perform alert_summaries_apply(coalesce((
        select jsonb_agg(d) from (
            select incident_id, summary, count(*) as total,
                   count(*) filter (where status <> 'resolved') as open,
                   min(received_at) as first_received_at, max(last_received_at) as last_received_at,
                   max(source_url) as source_url, max(severity) as severity
            from new_alerts group by incident_id, summary) d), '[]'));
    return null;
end $$;

create function alert_summaries_updated() returns trigger language plpgsql as $$
begin
    perform alert_summaries_apply(coalesce((
        select jsonb_agg(d) from (
            select incident_id, summary, sum(total) as total, sum(open) as open,
                   min(first_received_at) as first_received_at,
                   max(last_received_at) as last_received_at,
                   max(source_url) as source_url, max(severity) as severity
            from (
                -- Each changed alert leaves its old line and joins its new one; a repeat
                -- delivery (same line, same status) only moves the line's last time.
                select o.incident_id, o.summary, -1 as total,
                       -(o.status <> 'resolved')::int as open,
                       o.received_at as first_received_at, o.last_received_at,
                       null::text as source_url, o.severity
                from old_alerts o join new_alerts n on n.id = o.id
                union all
                select n.incident_id, n.summary, 1, (n.status <> 'resolved')::int,
                       n.received_at, n.last_received_at, n.source_url, n.severity
                from new_alerts n
            ) c
            group by incident_id, summary) d), '[]'));
    return null;
end $$;

create function alert_summaries_deleted() returns trigger language plpgsql as $$
begin
    perform alert_summaries_apply(coalesce((
        select jsonb_agg(d) from (
            select incident_id, summary, -count(*) as total,
                   -count(*) filter (where status <> 'resolved') as open,
                   min(received_at) as first_received_at, max(last_received_at) as last_received_at,
                   null::text as source_url, max(severity) as severity
            from old_alerts group by incident_id, summary) d), '[]'));
    return null;
end $$;

create trigger alert_summaries_on_insert after insert on alerts
    referencing new table as new_alerts for each statement execute function alert_summaries_inserted();
create trigger alert_summaries_on_update after update on alerts
    referencing old table as old_alerts new table as new_alerts
    for each statement execute function alert_summaries_updated();
create trigger alert_summaries_on_delete after delete on alerts
    referencing old table as old_alerts for each statement execute function alert_summaries_deleted();
