-- The reading marts.siting evaluates for each siting scenario (the table `siting_pairs`) and edge
-- device class: marts.verdict's answer row (is_answer), built the same way in the paper's frame,
-- which has no answer row: the scenario's headline basis (is_headline), the best admissible edge
-- design (is_best_design: its edge_design) under the method row that sets the verdict
-- (verdict_driver_method, verdict_driver_policy, verdict_driver_resize_power). One row per scenario
-- and class; the asset asks the model for these bases, designs and method rows only.
select distinct
    v.scenario_id,
    v.device_class,
    v.basis,
    v.edge_design,
    v.network_method,
    v.embodied_policy,
    v.resize_power
from marts.verdict as v
where v.is_headline and v.is_best_design
    and v.network_method = v.verdict_driver_method and v.embodied_policy = v.verdict_driver_policy
    and v.resize_power = v.verdict_driver_resize_power
    and v.scenario_id in (select scenario_id from siting_pairs)
order by v.scenario_id, v.device_class
