-- Grid page, over time: daily mean intensity per zone, from the sub-daily (hourly or
-- half-hourly) actual series. One emission scope per zone: lifecycle where the zone has it,
-- else direct. Zones with fewer than $min_days such days (e.g. a one-day recorded response)
-- are left out.
with chosen as (
    -- include: grid_chosen
),

daily as (
    select
        zone,
        emission_scope,
        strftime(date_trunc('day', period_start), '%Y-%m-%d') as day,
        avg(gco2e_per_kwh) as gco2e_per_kwh,
        count(*) as periods
    from chosen
    group by all
    having count(*) >= $min_periods_per_day
)

select zone, emission_scope, day, gco2e_per_kwh, periods
from daily
qualify count(*) over (partition by zone) >= $min_days
order by zone, day
