-- asset: group=marts
-- marts.grid_annual: annual average grid carbon intensity per zone and year, lifecycle scope
-- (staging.grid_intensity's annual_average rows, e.g. Ember). Grain: zone x year.
select
    zone,
    coalesce(zone_name, zone) as zone_name,
    year(timezone('UTC', period_start)) as year,
    avg(gco2e_per_kwh) as gco2e_per_kwh,
    any_value(source_id order by source_id) as source_id
from staging.grid_intensity
where signal = 'annual_average' and emission_scope = 'lifecycle'
group by all
order by zone, year
