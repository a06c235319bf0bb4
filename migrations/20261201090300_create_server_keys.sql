-- Secrets every replica shares, made once by whichever replica needs one first (auth/db.rs).
-- `login_csrf` signs the sign-in form's double-submit cookie, so an anonymous visit to /login
-- stores nothing.
create table server_keys (
    name text constraint server_keys_pkey primary key,
    key bytea not null constraint server_keys_key_length check (length(key) = 32),
    created_at timestamptz not null default now()
);
