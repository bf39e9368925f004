-- The rows of the edge training designs' draws the Monte Carlo holds once (a temporary table) for both its design
-- summaries, sql/model/uncertainty_rows.sql and best_design_rows.sql: the model's columns they read.
select
    scenario_id, variant_id, device_class, basis, is_headline, pattern, network_method, embodied_policy, resize_power,
    is_headline_method, is_headline_policy, is_headline_resize_power, reduction_factor, edge_added_kgco2e, cloud_total_kgco2e,
    design_admissible, memory_feasible, resized_from, is_scenario_design
from model_evaluation
