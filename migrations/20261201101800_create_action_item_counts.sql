-- How many action items there are of each (type, status): the action items page shows the
-- completion rate of every type over all items, and counting them on each view grew with the
-- years (4 ms of PostgreSQL's time per view at 20,000 items). Kept by the statements that
-- change action_items, a statement at a time (one upsert per statement, whatever its number of
-- rows; an edit that moves no item to another type or status writes nothing), so it is exact
-- in every transaction that reads it.
create table action_item_counts (
    type text not null,
    status text not null,
    n bigint not null,
    constraint action_item_counts_pkey primary key (type, status)
);

insert into action_item_counts (type, status, n)
select type, status, count(*) from action_items group by type, status;

-- Each statement adds its rows' moves ((type, status, +1) for a row written, -1 for a row it
-- replaced or deleted) in (type, status) order, so two statements over many items take the
-- count rows' locks in one order and never wait on each other in a circle.
create function action_item_counts_keep() returns trigger language plpgsql as $$
begin
    if tg_op = 'TRUNCATE' then
        delete from action_item_counts;
    elsif tg_op = 'INSERT' then
        insert into action_item_counts as c (type, status, n)
        select type, status, count(*) from new_rows group by type, status order by type, status
        on conflict (type, status) do update set n = c.n + excluded.n;
    elsif tg_op = 'DELETE' then
        insert into action_item_counts as c (type, status, n)
        select type, status, -count(*) from old_rows group by type, status order by type, status
        on conflict (type, status) do update set n = c.n + excluded.n;
    else
        insert into action_item_counts as c (type, status, n)
        select type, status, sum(d) from (
            select type, status, 1 as d from new_rows
            union all
            select type, status, -1 from old_rows) moves
        group by type, status having sum(d) <> 0
        order by type, status
        on conflict (type, status) do update set n = c.n + excluded.n;
    end if;
    return null;
end
$$;

create trigger action_item_counts_insert after insert on action_items
    referencing new table as new_rows for each statement execute function action_item_counts_keep();
create trigger action_item_counts_update after update on action_items
    referencing old table as old_rows new table as new_rows
    for each statement execute function action_item_counts_keep();
create trigger action_item_counts_delete after delete on action_items
    referencing old table as old_rows for each statement execute function action_item_counts_keep();
create trigger action_item_counts_truncate after truncate on action_items
    for each statement execute function action_item_counts_keep();

-- The index the rates were counted from is no longer read.
drop index action_items_by_type_status;
