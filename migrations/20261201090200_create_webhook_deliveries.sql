-- Signed webhook messages seen recently, by their `webhook-id`: a replay within the signature's
-- five-minute window is answered again without being stored twice. Rows older than the window
-- (with a margin) are swept; a replay after it fails the timestamp check anyway.
create table webhook_deliveries (
    integration_id uuid not null
        constraint webhook_deliveries_integration_fkey references integrations (id) on delete cascade,
    msg_id text not null,
    received_at timestamptz not null default now(),
    constraint webhook_deliveries_pkey primary key (integration_id, msg_id)
);
create index webhook_deliveries_received on webhook_deliveries (received_at);
