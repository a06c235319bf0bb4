-- The action-item list's order (soonest due first, no due date last, then by id), so a page of
-- it reads its hundred rows from the index instead of sorting every item of every postmortem.
create index action_items_by_due on action_items ((coalesce(due_on, 'infinity'::date)), id);
-- The completion rates by type, counted from the index alone.
create index action_items_by_type_status on action_items (type, status);
