-- Monte Carlo summary over the model's evaluation of drawn parameter sets (the view
-- model_evaluation: the headline basis and measured_throughput). Grain: scenario x edge device
-- class x basis x pattern.
-- p05/p50/p95 and the mean of R, edge added and cloud total; the share of draws below R = 1
-- and R = 4 and within the link and memory limits; and a histogram of R in log-spaced bins
-- ($bins_per_decade per decade; key k is the bin [10^(k/b), 10^((k+1)/b))).
-- Means are Kahan-summed (favg), so they do not depend on the order DuckDB's threads add the draws in.
select
    scenario_id,
    device_class,
    basis,
    is_headline,
    pattern,
    count(*) as n_draws,
    quantile_cont(reduction_factor, [0.05, 0.5, 0.95]) as reduction_factor_quantiles,
    favg(reduction_factor) as reduction_factor_mean,
    quantile_cont(edge_added_kgco2e, [0.05, 0.5, 0.95]) as edge_added_kgco2e_quantiles,
    favg(edge_added_kgco2e) as edge_added_kgco2e_mean,
    -- the cloud side does not depend on the device class or pattern: its quantiles over one of them
    quantile_cont(cloud_total_kgco2e, [0.05, 0.5, 0.95]) filter (where pattern = 'none') as cloud_total_kgco2e_quantiles,
    favg(cloud_total_kgco2e) as cloud_total_kgco2e_mean,
    avg(case when reduction_factor < 1 then 1.0 else 0.0 end) as share_r_below_1,
    avg(case when reduction_factor < 4 then 1.0 else 0.0 end) as share_r_below_4,
    avg(case when link_time_share <= 1 then 1.0 else 0.0 end) as share_link_feasible,
    avg(case when memory_feasible then 1.0 else 0.0 end) as share_memory_feasible,
    map_entries(histogram(cast(floor(log10(reduction_factor) * $bins_per_decade) as integer))) as log10_histogram
from model_evaluation
group by scenario_id, device_class, basis, is_headline, pattern
order by scenario_id, device_class, basis, pattern
