-- Alerts in time partitions, so that years of them can be let go a month at a time
-- (QUELL_ALERT_RETENTION_DAYS) by dropping a table instead of deleting rows.
--
-- The partition key is `retained_from`: 'infinity' while an alert is open (firing or
-- acknowledged), its resolution time once it is resolved. So every open alert lives in one
-- partition, `alerts_open`, where the unique index keeps one open alert per dedup key exactly
-- as before (a unique index on a partitioned table must hold the partition key, and within
-- 'infinity' that adds nothing); resolving an alert moves it into the month it resolved in.
-- An alert still firing is never let go, however old.
--
-- Months are created ahead by the engine in every replica (`alert_partitions_cover`, under an
-- advisory lock, so replicas racing create each month once), and dropped by
-- `alert_partitions_drop`, which first adds what each dropped alert counted to
-- `forgotten_alert_lines`: an incident's lines (and their counts) stay as they were, and
-- counting an incident's lines again (a merge) counts the forgotten alerts with the stored.
--
-- An installation with many alerts: this migration copies them once (about a minute per few
-- million rows); take a backup first, as docs/operations.md says for every upgrade.

alter table alerts rename to alerts_unpartitioned;
alter index alerts_pkey rename to alerts_unpartitioned_pkey;
alter index alerts_one_open rename to alerts_unpartitioned_one_open;
alter index alerts_by_incident rename to alerts_unpartitioned_by_incident;
alter index alerts_by_received rename to alerts_unpartitioned_by_received;
alter index alerts_key_history rename to alerts_unpartitioned_key_history;
alter index alerts_silence rename to alerts_unpartitioned_silence;

create table alerts (
    id bigint generated always as identity,
    integration_id uuid not null constraint alerts_integration_fkey references integrations (id),
    group_id bigint not null constraint alerts_group_fkey references alert_groups (id) on delete cascade,
    incident_id bigint not null constraint alerts_incident_fkey references incidents (id) on delete cascade,
    dedup_key text not null,
    status text not null constraint alerts_status_check
        check (status in ('firing', 'acknowledged', 'resolved')),
    summary text not null,
    source text not null default '',
    severity text not null default '',
    labels jsonb not null default '{}',
    details jsonb not null default '{}',
    source_url text,
    starts_at timestamptz,
    received_at timestamptz not null default now(),
    last_received_at timestamptz not null default now(),
    -- at least 1: the upsert tells an alert it inserted (deliveries as given) from one joined
    deliveries integer not null default 1 constraint alerts_deliveries_check check (deliveries > 0),
    resolved_at timestamptz,
    resolved_by text constraint alerts_resolved_by_check check (resolved_by in ('sender', 'incident')),
    rule_id bigint constraint alerts_rule_fkey references routing_rules (id) on delete set null,
    routed jsonb not null default '{}',
    raw jsonb not null,
    silence_id bigint constraint alerts_silence_fkey references silences (id) on delete set null,
    window_id bigint constraint alerts_window_fkey references maintenance_windows (id) on delete set null,
    -- 'infinity' while open, the resolution time once resolved: the partition key
    retained_from timestamptz not null default 'infinity',
    constraint alerts_resolved_stamp check ((status = 'resolved') = (resolved_at is not null)),
    constraint alerts_retained_from check (retained_from = coalesce(resolved_at, 'infinity'))
) partition by range (retained_from);

create table alerts_open partition of alerts for values from ('infinity') to (maxvalue);

-- What the alerts of dropped months counted, by incident line: a line counted again after a
-- merge adds these to the alerts still stored.
create table forgotten_alert_lines (
    incident_id bigint not null references incidents (id) on delete cascade,
    summary text not null,
    rule_id bigint,
    total bigint not null constraint forgotten_alert_lines_total check (total > 0),
    first_received_at timestamptz not null,
    last_received_at timestamptz not null,
    source_url text,
    severity text not null,
    constraint forgotten_alert_lines_key unique nulls not distinct (incident_id, summary, rule_id)
);

-- Whether table `part` exists in this schema, as committed now: read from pg_class by a query of
-- its own (a fresh snapshot), not the session's catalog cache, which may not yet have seen what
-- another replica committed while this one waited for the advisory lock.
create function alert_partition_exists(part text) returns boolean
language sql volatile as $$
    select exists (select 1 from pg_class c join pg_namespace n on n.oid = c.relnamespace
                   where c.relname = part and n.nspname = current_schema())
$$;

-- Creates the month partitions from `since`'s month through `through`'s (UTC) that are missing;
-- returns how many it created. Replicas racing take turns on an advisory lock, and each month
-- is created once. Waits at most 2 s for the table lock a new partition needs, so ingestion is
-- never held up longer: the caller tries again on its next round.
create function alert_partitions_cover(since timestamptz, through timestamptz) returns integer
language plpgsql set lock_timeout = '2s' as $$
declare
    month date := date_trunc('month', since at time zone 'UTC')::date;
    made integer := 0;
    part text;
begin
    while month <= (through at time zone 'UTC')::date loop
        part := format('alerts_%s', to_char(month, 'YYYY_MM'));
        if not alert_partition_exists(part) then
            perform pg_advisory_xact_lock(hashtext('quell: alert partitions'));
            if not alert_partition_exists(part) then
                execute format('create table %I partition of alerts for values from (%L) to (%L)',
                               part, month::timestamp at time zone 'UTC',
                               (month + interval '1 month')::timestamp at time zone 'UTC');
                made := made + 1;
            end if;
        end if;
        month := (month + interval '1 month')::date;
    end loop;
    return made;
end
$$;

-- Drops the oldest month partition that ended on or before `before`, first adding what its
-- alerts counted to `forgotten_alert_lines`; returns its name (nothing when none is due).
-- One month a call, so the table lock a drop takes is held for one month's count only: the
-- caller calls again, each in a transaction of its own, until nothing is returned.
-- `alerts_open` is never one of them. Replicas racing take turns on the same advisory lock,
-- and a month is dropped once. The month is share-locked before it is counted, so a merge
-- moving its alerts to another incident waits for the drop (or the drop for it) and the count
-- is credited to the incident the alerts belong to.
create function alert_partitions_drop(before timestamptz) returns setof text
language plpgsql set lock_timeout = '2s' as $$
declare
    part text;
begin
    for part in
        select c.relname from pg_inherits i join pg_class c on c.oid = i.inhrelid
        where i.inhparent = 'alerts'::regclass and c.relname ~ '^alerts_[0-9]{4}_[0-9]{2}$'
          and (to_date(substr(c.relname, 8), 'YYYY_MM') + interval '1 month')::timestamp
              at time zone 'UTC' <= before
        order by c.relname
        limit 1
    loop
        perform pg_advisory_xact_lock(hashtext('quell: alert partitions'));
        continue when not alert_partition_exists(part);
        execute format('lock table %I in share mode', part);
        execute format(
            'insert into forgotten_alert_lines as f (incident_id, summary, rule_id, total,
                 first_received_at, last_received_at, source_url, severity)
             select incident_id, summary, rule_id, count(*), min(received_at),
                    max(last_received_at), max(source_url), max(severity)
             from %I group by incident_id, summary, rule_id
             on conflict (incident_id, summary, rule_id) do update
             set total = f.total + excluded.total,
                 first_received_at = least(f.first_received_at, excluded.first_received_at),
                 last_received_at = greatest(f.last_received_at, excluded.last_received_at),
                 source_url = greatest(f.source_url, excluded.source_url),
                 severity = greatest(f.severity, excluded.severity)', part);
        execute format('drop table %I', part);
        return next part;
    end loop;
end
$$;

-- The months the stored alerts resolved in, and this one and the next two.
select alert_partitions_cover(coalesce(min(resolved_at), now()), now() + interval '2 months')
from alerts_unpartitioned;

insert into alerts (id, integration_id, group_id, incident_id, dedup_key, status, summary, source,
                    severity, labels, details, source_url, starts_at, received_at,
                    last_received_at, deliveries, resolved_at, resolved_by, rule_id, routed, raw,
                    silence_id, window_id, retained_from)
overriding system value
select id, integration_id, group_id, incident_id, dedup_key, status, summary, source, severity,
       labels, details, source_url, starts_at, received_at, last_received_at, deliveries,
       resolved_at, resolved_by, rule_id, routed, raw, silence_id, window_id,
       coalesce(resolved_at, 'infinity')
from alerts_unpartitioned;

drop table alerts_unpartitioned;

select setval(pg_get_serial_sequence('alerts', 'id'), coalesce(max(id), 0) + 1, false) from alerts;

alter table alerts add constraint alerts_pkey primary key (id, retained_from);
-- One open alert per dedup key: every open alert is in `alerts_open`.
create unique index alerts_one_open on alerts (integration_id, dedup_key, retained_from)
    where status <> 'resolved';
create index alerts_by_incident on alerts (incident_id, id) include (status, rule_id, retained_from);
create index alerts_by_received on alerts (received_at);
create index alerts_key_history on alerts (integration_id, dedup_key, received_at);
create index alerts_silence on alerts (silence_id) where silence_id is not null;
-- Statistics for the parent as a whole (autovacuum analyzes only the partitions).
analyze alerts;
