-- Uncertainty page: p05, p50, p95 of R (marts.uncertainty, the frame's headline network method; over the feasible draws) for the patterns in $patterns, one row per mark.
select scenario_id, device_class, pattern, quantile, reduction_factor, n_draws, share_r_below_1, share_r_below_4
from marts.uncertainty
unpivot (reduction_factor for quantile in (p05, p50, p95))
where metric = 'reduction_factor' and is_headline and is_headline_method and list_contains($patterns::varchar[], pattern)
order by scenario_id, device_class, pattern, quantile
