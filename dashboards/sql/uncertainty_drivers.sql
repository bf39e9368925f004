-- Uncertainty page: the $top parameters with the largest total Sobol index per scenario, device
-- class and pattern (marts.uncertainty_drivers), for the patterns in $patterns.
select scenario_id, device_class, pattern, parameter, s1, s1_ci95, st, st_ci95, st_share_of_sum, rank
from marts.uncertainty_drivers
where rank <= $top and list_contains($patterns::varchar[], pattern)
order by scenario_id, device_class, pattern, rank
