-- Indexes for an installation with years of history (scripts/bench-scale): the dashboard's
-- 30 days and the reports' periods read incidents by detection time; related-incident
-- suggestions read a service's newest incidents first.
create index incidents_detected on incidents (detected_at);
create index incidents_service_detected on incidents (service_id, detected_at desc);
drop index incidents_service;
-- An incident's alerts by id, carrying what their pages filter on, so that a page of a storm
-- incident's alerts and the rules its alerts matched are read from the index alone.
drop index alerts_by_incident;
create index alerts_by_incident on alerts (incident_id, id) include (status, rule_id);
-- The open incidents, a handful among years of resolved ones (the dashboard, the engines).
create index incidents_open on incidents (severity, detected_at) where status <> 'resolved';
