-- Search reads each text's vector from the row instead of computing it again for every match
-- it ranks: stored generated columns with their GIN indexes replace the expression indexes.
alter table incidents add column search tsvector
    generated always as (to_tsvector('english', title || ' ' || summary || ' ' || impact)) stored;
drop index incidents_text_search;
create index incidents_search on incidents using gin (search);

alter table timeline_events add column search tsvector
    generated always as (to_tsvector('english', body)) stored;
drop index timeline_events_text_search;
create index timeline_events_search on timeline_events using gin (search);

alter table postmortems add column search tsvector
    generated always as (to_tsvector('english', summary || ' ' || impact || ' ' || root_cause || ' '
        || contributing_factors || ' ' || detection || ' ' || went_well || ' ' || was_hard || ' '
        || got_lucky || ' ' || lessons)) stored;
drop index postmortems_text_search;
create index postmortems_search on postmortems using gin (search);
