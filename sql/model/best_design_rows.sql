-- The best_design rows sql/model/uncertainty_summary.sql summarises (the view `evaluated`): per draw and method row,
-- the best admissible edge training design among the scenario's (is_scenario_design, where it has more than one): its
-- R, edge carbon and feasibility (pattern null); a draw with no admissible design is infeasible. Over the view
-- model_evaluation of the scenarios' designs alone.
select
    scenario_id, device_class, basis, bool_and(is_headline) as is_headline, null::varchar as pattern, network_method,
    embodied_policy, resize_power, bool_and(is_headline_method) as is_headline_method,
    bool_and(is_headline_policy) as is_headline_policy, bool_and(is_headline_resize_power) as is_headline_resize_power,
    max(reduction_factor) filter (where design_admissible) as reduction_factor,
    arg_max(edge_added_kgco2e, reduction_factor) filter (where design_admissible) as edge_added_kgco2e,
    any_value(cloud_total_kgco2e) as cloud_total_kgco2e, bool_or(design_admissible) as link_feasible,
    bool_or(memory_feasible) as memory_feasible,
    arg_max(resized_from, reduction_factor) filter (where design_admissible) as resized_from, true as best_design
from model_evaluation
where is_scenario_design
group by scenario_id, device_class, basis, network_method, embodied_policy, resize_power, variant_id
having count(*) > 1
