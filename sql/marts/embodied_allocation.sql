-- asset: group=reviewers
-- marts.embodied_allocation: the edge devices' embodied carbon charged to training under each allocation policy
-- (core.embodied_policies: none, the paper's, devices owned anyway; battery_wear; per use hour; calendar hours),
-- and R under it: core.model_evaluation's family 'policies', compute only, each scenario's headline basis. Grain:
-- scenario x edge device class x policy. A class without a manufacturer footprint has no embodied carbon to
-- allocate and no row.
select
    model.scenario_id,
    model.device_class,
    model.variant_id as policy,
    model.variant_id = scenarios.edge_embodied_policy as is_scenario_policy,
    model.devices,
    model.edge_embodied_kgco2e / model.devices as embodied_per_device_kgco2e,
    model.edge_embodied_kgco2e,
    model.edge_added_kgco2e,
    model.reduction_factor
from core.model_evaluation as model
inner join core.scenarios as scenarios on scenarios.scenario_id = model.scenario_id
-- the policies in core.embodied_policies's order
inner join (select policy, rowid as policy_order from core.embodied_policies) as policies on policies.policy = model.variant_id
where model.family = 'policies' and model.edge_embodied_kgco2e is not null
order by model.scenario_id, model.device_class, policies.policy_order
