-- Opsgenie's Alert API answers 202 with a request id; what became of the request is then
-- readable (`GET /v2/alerts/requests/{id}`). A row is written in the transaction that did the
-- work, so an id that was answered can always be read back. Kept a week (the sweep).
create table opsgenie_requests (
    request_id uuid constraint opsgenie_requests_pkey primary key,
    integration_id uuid not null constraint opsgenie_requests_integration_fkey
        references integrations (id) on delete cascade,
    -- Opsgenie's word for it: Create, Acknowledge, Close, AddNote, Snooze
    action text not null,
    alias text not null,
    -- the alert it acted on, when there was one (no key: alerts may be dropped before this)
    alert_id bigint,
    success boolean not null,
    status text not null,
    processed_at timestamptz not null default now()
);
create index opsgenie_requests_by_processed on opsgenie_requests (processed_at);
