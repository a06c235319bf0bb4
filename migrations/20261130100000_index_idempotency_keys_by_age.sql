-- Idempotency keys are kept for a day; the sweeper deletes older ones by this index.
create index idempotency_keys_created on idempotency_keys (created_at);
