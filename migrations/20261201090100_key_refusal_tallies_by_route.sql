-- Refused attempts are tallied by what Quell controls — the action, the route template, the
-- client address and the minute — not by what the requester typed (a path, an email, a webhook
-- id), so a flood of made-up subjects still adds one audit row a minute per address.
alter table audit_refusal_tally rename column subject to route;
