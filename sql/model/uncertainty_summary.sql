-- Monte Carlo summary over the view `evaluated` (sql/model/uncertainty_rows.sql: each draw's rows of the view
-- model_evaluation; sql/model/best_design_rows.sql: each draw's best admissible edge design) of the model's
-- evaluation of drawn parameter sets (the view model_evaluation: the headline basis and measured_throughput, every method row the scenario's
-- frame admits on the patterns marts.verdict reads). Grain: scenario x edge device class x basis x
-- pattern x network method x allocation policy x resize power.
-- A draw whose fleet cannot send its traffic over its links, even resized (link_feasible), does
-- not train: p05/p50/p95 and the means of R, edge added and cloud total are over the feasible
-- draws, with the share of feasible draws beside them; the shares below R = 1 and R = 4 are of
-- the feasible draws too. Beside them, the all-draw reading: an infeasible draw counts as a
-- failure (R = 0, the fleet delivers none of the job), so reduction_factor_all_quantiles and the
-- shares of draws that are feasible and reach R = 1 and the claim's low end are over every draw.
-- The histogram of R (log-spaced bins, $bins_per_decade per decade; key
-- k is the bin [10^(k/b), 10^((k+1)/b))) counts the feasible draws, on the headline basis and method
-- row (the rows marts.uncertainty_distribution keeps; empty on the others).
-- Means are Kahan-summed (favg), so they do not depend on the order DuckDB's threads add the draws in.
-- A draw of an edge training design (core.patterns edge_design) is feasible where it is admissible (the model's
-- design_admissible: its links carry its traffic and its devices hold its memory). Beside each pattern's rows,
-- best_design rows (pattern null) read, per draw and method row, the best admissible design among the scenario's
-- designs (is_scenario_design, where it has more than one): its R, edge carbon and feasibility; a draw with no
-- admissible design is infeasible.
select
    scenario_id,
    device_class,
    basis,
    is_headline,
    pattern,
    network_method,
    embodied_policy,
    resize_power,
    is_headline_method,
    is_headline_policy,
    is_headline_resize_power,
    best_design,
    count(*) as n_draws,
    count(*) filter (where link_feasible) as n_feasible,
    quantile_cont(reduction_factor, [0.05, 0.5, 0.95]) filter (where link_feasible) as reduction_factor_quantiles,
    favg(reduction_factor) filter (where link_feasible) as reduction_factor_mean,
    quantile_cont(edge_added_kgco2e, [0.05, 0.5, 0.95]) filter (where link_feasible) as edge_added_kgco2e_quantiles,
    favg(edge_added_kgco2e) filter (where link_feasible) as edge_added_kgco2e_mean,
    -- the cloud side does not depend on the device class or pattern: its quantiles over one of them, on
    -- the compute-only rows (the pattern that moves no bytes: core.patterns)
    quantile_cont(cloud_total_kgco2e, [0.05, 0.5, 0.95]) filter (where pattern = (select pattern from core.patterns where not moves_bytes))
        as cloud_total_kgco2e_quantiles,
    favg(cloud_total_kgco2e) filter (where link_feasible) as cloud_total_kgco2e_mean,
    avg(case when reduction_factor < 1 then 1.0 else 0.0 end) filter (where link_feasible) as share_r_below_1,
    avg(case when reduction_factor < $claim_low then 1.0 else 0.0 end) filter (where link_feasible) as share_r_below_4,
    avg(case when link_feasible then 1.0 else 0.0 end) as share_link_feasible,
    -- over every draw: an infeasible draw is a failure (R = 0)
    quantile_cont(case when link_feasible then reduction_factor else 0.0 end, [0.05, 0.5, 0.95]) as reduction_factor_all_quantiles,
    avg(case when link_feasible and reduction_factor >= 1 then 1.0 else 0.0 end) as share_feasible_r_ge_1,
    avg(case when link_feasible and reduction_factor >= $claim_low then 1.0 else 0.0 end) as share_feasible_r_ge_4,
    avg(case when memory_feasible then 1.0 else 0.0 end) as share_memory_feasible,
    avg(case when resized_from is not null then 1.0 else 0.0 end) as share_resized,
    -- counted from the list of bins (a histogram() aggregate would have DuckDB materialise every row);
    -- marts.uncertainty_distribution keeps the headline basis and method row only
    map_entries(list_aggregate(list(cast(floor(log10(reduction_factor) * $bins_per_decade) as integer))
                                   filter (where link_feasible and is_headline and is_headline_method), 'histogram'))
        as log10_histogram
from evaluated
group by all
order by scenario_id, device_class, basis, best_design, pattern, network_method, embodied_policy, resize_power
