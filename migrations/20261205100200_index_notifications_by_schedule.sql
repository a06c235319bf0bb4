-- A schedule's hand-off notices in the outbox: found by the schedule when it is deleted.
create index notifications_by_schedule on notifications (schedule_id) where schedule_id is not null;
