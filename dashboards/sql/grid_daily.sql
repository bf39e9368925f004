-- Grid page, over time: daily mean intensity per zone (marts.grid_daily). Days averaging fewer
-- than $min_periods_per_day periods, and zones with fewer than $min_days such days (e.g. a
-- one-day recorded response), are left out.
select zone, emission_scope, strftime(day, '%Y-%m-%d') as day, gco2e_per_kwh, periods
from marts.grid_daily
where periods >= $min_periods_per_day
qualify count(*) over (partition by zone) >= $min_days
order by zone, day
