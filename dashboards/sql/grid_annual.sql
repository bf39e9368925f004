-- Grid page, long run: annual average intensity for a few zones ($zones), lifecycle scope.
select
    zone,
    coalesce(zone_name, zone) as zone_name,
    year(period_start) as year,
    avg(gco2e_per_kwh) as gco2e_per_kwh,
    any_value(source_id) as source_id
from staging.grid_intensity
where signal = 'annual_average' and emission_scope = 'lifecycle' and list_contains($zones, zone)
group by all
order by zone, year
