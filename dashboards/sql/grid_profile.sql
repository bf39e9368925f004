-- Grid page, daily profile: mean intensity by hour of day (UTC) per zone (marts.grid_profiles),
-- hours averaging fewer than $min_periods_per_hour periods left out.
select zone, emission_scope, hour_utc, mean_gco2e_per_kwh, min_gco2e_per_kwh, max_gco2e_per_kwh, periods
from marts.grid_profiles
where periods >= $min_periods_per_hour
order by zone, hour_utc
