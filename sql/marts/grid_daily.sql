-- asset: group=marts
-- marts.grid_daily: daily mean grid carbon intensity per zone, from the sub-daily (hourly or
-- half-hourly) actual series of staging.grid_intensity. One emission scope per zone: lifecycle
-- where the zone has it, else the first other by name (direct). Days are UTC days.
-- Grain: zone x day.
with sub_daily as (
    select zone, emission_scope, timezone('UTC', period_start) as period_start_utc, gco2e_per_kwh
    from staging.grid_intensity
    where signal = 'actual' and resolution in ('PT1H', 'PT30M')
    qualify emission_scope = case when bool_or(emission_scope = 'lifecycle') over (partition by zone) then 'lifecycle'
                                  else min(emission_scope) over (partition by zone) end
)

select
    zone,
    emission_scope,
    cast(date_trunc('day', period_start_utc) as date) as day,
    avg(gco2e_per_kwh) as gco2e_per_kwh,
    count(*) as periods
from sub_daily
group by all
order by zone, day
