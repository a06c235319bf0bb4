-- The capacity check: a change to a limit (a pool size, a connection cap …) carries the limit's
-- name, its value per replica and the replica count, and may carry the peak arrival rate and
-- latency; a service records its own peak rate and latency for the changes that carry none.
alter table services
    add column peak_requests_per_second double precision
        constraint services_peak_rate_check
        check (peak_requests_per_second > 0 and peak_requests_per_second <= 10000000),
    add column peak_latency_seconds double precision
        constraint services_peak_latency_check
        check (peak_latency_seconds > 0 and peak_latency_seconds <= 3600);

alter table changes
    add column capacity_limit text
        constraint changes_capacity_limit_length check (length(capacity_limit) between 1 and 100),
    add column capacity_per_replica bigint
        constraint changes_capacity_per_replica_check check (capacity_per_replica between 1 and 1000000),
    add column capacity_replicas bigint
        constraint changes_capacity_replicas_check check (capacity_replicas between 1 and 100000),
    add column capacity_peak_requests_per_second double precision
        constraint changes_capacity_rate_check
        check (capacity_peak_requests_per_second > 0 and capacity_peak_requests_per_second <= 10000000),
    add column capacity_peak_latency_seconds double precision
        constraint changes_capacity_latency_check
        check (capacity_peak_latency_seconds > 0 and capacity_peak_latency_seconds <= 3600),
    -- the limit, its value and the replicas come together; rate and latency only with them
    add constraint changes_capacity_whole check (
        (capacity_limit is null) = (capacity_per_replica is null)
        and (capacity_limit is null) = (capacity_replicas is null)
        and (capacity_limit is not null
             or (capacity_peak_requests_per_second is null and capacity_peak_latency_seconds is null)));
