-- The rows sql/model/uncertainty_summary.sql summarises (the view `evaluated`): each draw's rows of the model's
-- evaluation (the view model_evaluation), a draw feasible where its design is admissible (design_admissible: its links
-- carry its traffic and, for an edge training design, its devices hold its memory).
select
    scenario_id, device_class, basis, is_headline, pattern, network_method, embodied_policy, resize_power, is_headline_method,
    is_headline_policy, is_headline_resize_power, reduction_factor, edge_added_kgco2e, cloud_total_kgco2e,
    design_admissible as link_feasible, memory_feasible, resized_from, false as best_design
from model_evaluation
