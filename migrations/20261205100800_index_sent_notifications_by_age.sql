-- Messages done with (delivered, failed, cancelled) by age: the sweeper deletes those older
-- than QUELL_OUTBOX_RETENTION_DAYS a batch at a time; pending ones are never deleted.
create index notifications_done_by_age on notifications (created_at) where state <> 'pending';
-- The status page mailer's ledger is read for the last day's events only.
create index status_mailings_by_age on status_mailings (queued_at);
