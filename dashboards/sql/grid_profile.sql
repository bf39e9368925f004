-- Grid page, daily profile: mean intensity by hour of day (UTC) per zone, where hourly or
-- half-hourly actual data exists. Same choice of emission scope as grid_daily.sql.
with chosen as (
    -- include: grid_chosen
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
