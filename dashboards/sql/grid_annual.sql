-- Grid page, long run: annual average intensity for a few zones ($zones), lifecycle scope
-- (marts.grid_annual).
select zone, zone_name, year, gco2e_per_kwh, source_id
from marts.grid_annual
where list_contains($zones, zone)
order by zone, year
