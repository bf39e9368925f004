-- Grid page, daily profile: mean intensity by hour of day (UTC) per zone, where hourly or
-- half-hourly actual data exists. Same choice of emission scope as grid_daily.sql.
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
)

select
    zone,
    emission_scope,
    hour(period_start) as hour_utc,
    avg(gco2e_per_kwh) as mean_gco2e_per_kwh,
    min(gco2e_per_kwh) as min_gco2e_per_kwh,
    max(gco2e_per_kwh) as max_gco2e_per_kwh,
    count(*) as periods
from chosen
group by all
having count(*) >= $min_periods_per_hour
order by zone, hour_utc
