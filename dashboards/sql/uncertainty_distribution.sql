-- Uncertainty page: the histogram of R (marts.uncertainty_distribution) for the patterns in $patterns.
select scenario_id, device_class, pattern, bin_low, bin_high, draws, share
from marts.uncertainty_distribution
where list_contains($patterns::varchar[], pattern)
order by scenario_id, device_class, pattern, bin_low
