-- Grouping beyond a key: a routing rule may group the alerts it decides that share chosen
-- fields into one incident within a window from the group's first alert, whatever their own
-- group keys; the group says how it was formed.
alter table routing_rules
    add column group_by text[] not null default '{}'
        constraint routing_rules_group_by_check check (cardinality(group_by) <= 5),
    add column group_window_minutes integer not null default 10
        constraint routing_rules_group_window_check check (group_window_minutes between 1 and 1440);
alter table alert_groups add column grouped_by text;
