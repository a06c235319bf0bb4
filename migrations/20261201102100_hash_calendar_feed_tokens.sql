-- A calendar feed's address is its credential: keep only its SHA-256, as for API tokens. The
-- addresses people subscribed to keep working (the same token hashes to the same value).
alter table oncall_feeds add column token_hash bytea;
update oncall_feeds set token_hash = sha256(convert_to(token, 'UTF8'));
alter table oncall_feeds alter column token_hash set not null;
alter table oncall_feeds add constraint oncall_feeds_token_hash_key unique (token_hash);
alter table oncall_feeds drop column token;
