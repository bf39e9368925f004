-- asset: group=marts
-- marts.grid_profiles: the daily profile of grid carbon intensity per zone, by hour of the day
-- (UTC), from the sub-daily (hourly or half-hourly) actual series of staging.grid_intensity, in
-- the one emission scope marts.grid_daily chose for the zone. Grain: zone x hour of day.
with scopes as (
    select distinct zone, emission_scope from marts.grid_daily
)

select
    zone,
    emission_scope,
    hour(timezone('UTC', period_start)) as hour_utc,
    avg(gco2e_per_kwh) as mean_gco2e_per_kwh,
    min(gco2e_per_kwh) as min_gco2e_per_kwh,
    max(gco2e_per_kwh) as max_gco2e_per_kwh,
    count(*) as periods
from staging.grid_intensity
inner join scopes using (zone, emission_scope)
where signal = 'actual' and resolution in ('PT1H', 'PT30M')
group by all
order by zone, hour_utc
