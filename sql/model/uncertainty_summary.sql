-- Monte Carlo summary over the model's evaluation of drawn parameter sets (the view
-- model_evaluation, headline basis only). Grain: scenario x edge device class x pattern.
-- Percentiles 1..99 of R (for the distribution), p05/p50/p95 and the mean of R, edge added and
-- cloud total, and the share of draws below R = 1 and R = 4 and within the link and memory limits.
select
    scenario_id,
    device_class,
    pattern,
    count(*) as n_draws,
    quantile_cont(reduction_factor, [0.05, 0.5, 0.95]) as reduction_factor_quantiles,
    avg(reduction_factor) as reduction_factor_mean,
    quantile_cont(reduction_factor, [
        0.01, 0.02, 0.03, 0.04, 0.05, 0.06, 0.07, 0.08, 0.09, 0.10, 0.11, 0.12, 0.13, 0.14, 0.15, 0.16, 0.17, 0.18, 0.19,
        0.20, 0.21, 0.22, 0.23, 0.24, 0.25, 0.26, 0.27, 0.28, 0.29, 0.30, 0.31, 0.32, 0.33, 0.34, 0.35, 0.36, 0.37, 0.38,
        0.39, 0.40, 0.41, 0.42, 0.43, 0.44, 0.45, 0.46, 0.47, 0.48, 0.49, 0.50, 0.51, 0.52, 0.53, 0.54, 0.55, 0.56, 0.57,
        0.58, 0.59, 0.60, 0.61, 0.62, 0.63, 0.64, 0.65, 0.66, 0.67, 0.68, 0.69, 0.70, 0.71, 0.72, 0.73, 0.74, 0.75, 0.76,
        0.77, 0.78, 0.79, 0.80, 0.81, 0.82, 0.83, 0.84, 0.85, 0.86, 0.87, 0.88, 0.89, 0.90, 0.91, 0.92, 0.93, 0.94, 0.95,
        0.96, 0.97, 0.98, 0.99]) as reduction_factor_percentiles,
    quantile_cont(edge_added_kgco2e, [0.05, 0.5, 0.95]) as edge_added_kgco2e_quantiles,
    avg(edge_added_kgco2e) as edge_added_kgco2e_mean,
    quantile_cont(cloud_total_kgco2e, [0.05, 0.5, 0.95]) as cloud_total_kgco2e_quantiles,
    avg(cloud_total_kgco2e) as cloud_total_kgco2e_mean,
    avg(case when reduction_factor < 1 then 1.0 else 0.0 end) as share_r_below_1,
    avg(case when reduction_factor < 4 then 1.0 else 0.0 end) as share_r_below_4,
    avg(case when link_time_share <= 1 then 1.0 else 0.0 end) as share_link_feasible,
    avg(case when memory_feasible then 1.0 else 0.0 end) as share_memory_feasible
from model_evaluation
group by scenario_id, device_class, pattern
order by scenario_id, device_class, pattern
