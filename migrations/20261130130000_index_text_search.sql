-- Full-text search over incidents, their timelines and their postmortems (English stemming),
-- each with an expression index the search query uses as written.
create index incidents_text_search on incidents
    using gin (to_tsvector('english', title || ' ' || summary || ' ' || impact));
create index timeline_events_text_search on timeline_events
    using gin (to_tsvector('english', body));
create index postmortems_text_search on postmortems
    using gin (to_tsvector('english', summary || ' ' || impact || ' ' || root_cause || ' '
        || contributing_factors || ' ' || detection || ' ' || went_well || ' ' || was_hard || ' '
        || got_lucky || ' ' || lessons));
