-- On-call load reads the pages people received in a period by when they were delivered.
create index notifications_pages_received on notifications (delivered_at)
    where event = 'incident.paged' and state = 'delivered' and person_id is not null;
