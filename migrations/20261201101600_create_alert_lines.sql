-- An incident's alerts gathered by what they say (and the routing rule that took them): one row
-- per line its page shows, kept by the statements that store, acknowledge and resolve alerts —
-- once per statement, for the whole batch, never per alert and never by trigger — so a storm
-- incident's page reads a few rows instead of counting fifty thousand alerts on every view.
-- A line is split in up to 16 shards, by the server process (connection) that wrote it, so
-- the concurrent batches of a storm each add to their own row instead of queueing for one;
-- what a line says is the sum of its shards (a shard's open count may go below zero when
-- another shard's alerts resolve through it).
create table alert_lines (
    incident_id bigint not null references incidents (id) on delete cascade,
    summary text not null,
    -- the rule that routed the line's alerts (null: none); what the incident's runbooks follow
    rule_id bigint,
    shard smallint not null default 0,
    total bigint not null,
    -- alerts not resolved
    open bigint not null,
    first_received_at timestamptz not null,
    last_received_at timestamptz not null,
    source_url text,
    severity text not null,
    constraint alert_lines_key unique nulls not distinct (incident_id, summary, rule_id, shard),
    constraint alert_lines_total check (total >= 0)
);

insert into alert_lines (incident_id, summary, rule_id, total, open, first_received_at,
                         last_received_at, source_url, severity)
select incident_id, summary, rule_id, count(*), count(*) filter (where status <> 'resolved'),
       min(received_at), max(last_received_at), max(source_url), max(severity)
from alerts
group by incident_id, summary, rule_id;
