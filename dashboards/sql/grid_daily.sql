-- Grid page, over time: daily mean intensity per zone, from the sub-daily (hourly or
-- half-hourly) actual series. One emission scope per zone: lifecycle where the zone has it,
-- else direct. Zones with fewer than $min_days such days (e.g. a one-day recorded response)
-- are left out.
with sub_daily as (
    select zone, emission_scope, period_start, gco2e_per_kwh
    from staging.grid_intensity
    where signal = 'actual' and resolution in ('PT1H', 'PT30M')
),

scope as (
    select zone, min(emission_scope) filter (where emission_scope = 'lifecycle') as lifecycle_scope,
        min(emission_scope) as any_scope
    from sub_daily
    group by zone
),

chosen as (
    select sub_daily.*
    from sub_daily
    inner join scope using (zone)
    where sub_daily.emission_scope = coalesce(scope.lifecycle_scope, scope.any_scope)
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
