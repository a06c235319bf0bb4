-- Sign-in for people, browser sessions, API tokens, login throttling and the audit log.

alter table people
    add column role text not null default 'responder'
        constraint people_role_check check (role in ('viewer', 'responder', 'manager', 'admin')),
    add column password_hash text,
    add column disabled_at timestamptz,
    -- bumped by a password change or a disable: sessions signed in under an older epoch end
    add column session_epoch integer not null default 1;

-- Browser sessions (auth/session_store.rs): shared by every replica.
create table sessions (
    id text constraint sessions_pkey primary key,
    data jsonb not null,
    expiry_date timestamptz not null
);
create index sessions_expiry on sessions (expiry_date);

create table api_tokens (
    id bigint generated always as identity constraint api_tokens_pkey primary key,
    person_id bigint not null constraint api_tokens_person_fkey references people (id) on delete cascade,
    name text not null constraint api_tokens_name_length check (length(name) between 1 and 100),
    -- SHA-256 of the token: tokens are 256 random bits, so a fast hash is enough
    token_hash bytea not null constraint api_tokens_hash_key unique,
    -- the first characters, to tell tokens apart in lists
    prefix text not null,
    created_at timestamptz not null default now(),
    last_used_at timestamptz,
    revoked_at timestamptz
);
create index api_tokens_person on api_tokens (person_id);

-- Failed sign-ins per account and per client address, for growing delays.
create table login_throttle (
    key text constraint login_throttle_pkey primary key,
    failures integer not null,
    last_failure_at timestamptz not null,
    blocked_until timestamptz not null
);

create table audit_log (
    id bigint generated always as identity constraint audit_log_pkey primary key,
    at timestamptz not null default now(),
    actor_id bigint constraint audit_log_actor_fkey references people (id),
    actor text not null,
    action text not null,
    target text not null default '',
    outcome text not null constraint audit_log_outcome_check check (outcome in ('ok', 'refused')),
    before jsonb,
    after jsonb,
    request_id text,
    client_addr text
);
create index audit_log_at on audit_log (at desc, id desc);
create index audit_log_action on audit_log (action, at desc);

-- The audit log is append-only, whoever connects: no update, no delete, no truncate.
create function audit_log_is_append_only() returns trigger
language plpgsql as $$
begin
    raise exception 'audit_log is append-only: % is not allowed', tg_op
        using errcode = 'insufficient_privilege';
end;
$$;
create trigger audit_log_no_update_or_delete before update or delete on audit_log
    for each row execute function audit_log_is_append_only();
create trigger audit_log_no_truncate before truncate on audit_log
    for each statement execute function audit_log_is_append_only();

-- Refused attempts are tallied per minute, kind, subject and address: one audit row starts each
-- window, and this counter (outside the append-only log) counts the flood behind it.
create table audit_refusal_tally (
    audit_id bigint not null constraint audit_refusal_tally_audit_fkey references audit_log (id),
    action text not null,
    subject text not null,
    client_addr text not null,
    window_start timestamptz not null,
    count integer not null default 1,
    last_at timestamptz not null default now(),
    constraint audit_refusal_tally_pkey primary key (action, subject, client_addr, window_start)
);
create unique index audit_refusal_tally_audit on audit_refusal_tally (audit_id);
