-- An Idempotency-Key belongs to the person who sent it: another person reusing a key and body
-- must not receive the first person's stored answer. Keys are a one-day retry memory and old
-- rows do not say whose they were, so they are forgotten here.
delete from idempotency_keys;
alter table idempotency_keys
    add column person_id bigint not null
        constraint idempotency_keys_person_fkey references people (id) on delete cascade,
    drop constraint idempotency_keys_pkey,
    add constraint idempotency_keys_pkey primary key (person_id, scope, key);
