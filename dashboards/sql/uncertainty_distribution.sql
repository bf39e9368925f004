-- Uncertainty page: percentiles 1-99 of R (marts.uncertainty_distribution) for the patterns in $patterns.
select scenario_id, device_class, pattern, percentile, reduction_factor
from marts.uncertainty_distribution
where list_contains($patterns::varchar[], pattern)
order by scenario_id, device_class, pattern, percentile
