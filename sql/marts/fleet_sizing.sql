-- asset: group=reviewers
-- marts.fleet_sizing: devices per cloud GPU on every equivalence basis, per model size (the OPT family, 125M-66B:
-- core.model_evaluation's family 'model_sizes'), and which basis binds. Grain: scenario x edge device class x model
-- size x basis: a basis added by its row of core.bases has its rows here with no other change. The memory-capacity
-- count is the devices holding the model's training state per GPU holding it; the binding count is max(roofline
-- with availability, memory). Compute only, per class (a mixed fleet's sum has no count per basis of its own).
-- Answers the reviewers' objection 1 (peak FLOPS is the wrong equivalence).
with evaluated as (
    select model.*
    from core.model_evaluation as model
    inner join core.patterns as pattern on pattern.pattern = model.pattern
    where model.family = 'model_sizes' and not pattern.moves_bytes and model.device_class <> 'fleet'
),

-- the binding basis's count (the basis that takes the roofline with availability and the memory floor: core.bases
-- roofline and memory_floor): the memory floor where it binds, else the roofline basis's (core.bases roofline
-- without availability)
binding as (
    select
        evaluated.scenario_id, evaluated.variant_id, evaluated.device_class,
        evaluated.devices_memory_floor as devices_memory_capacity,
        case when evaluated.devices_from = 'memory_capacity' then 'memory_capacity'
            else (select basis from core.bases where roofline > 0 and not counts_availability) end as binding_basis
    from evaluated
    inner join core.bases as basis on basis.basis = evaluated.basis
    where basis.roofline > 0 and basis.memory_floor
)

select
    evaluated.scenario_id,
    evaluated.device_class,
    models.model_id,
    models.params,
    evaluated.basis,
    evaluated.devices_formula as devices,
    binding.devices_memory_capacity,
    binding.binding_basis
from evaluated
inner join binding using (scenario_id, variant_id, device_class)
inner join staging.model_configs as models on models.model_id = evaluated.variant_id
-- the bases in core.bases's order
inner join (select basis, rowid as basis_order from core.bases) as bases on bases.basis = evaluated.basis
order by evaluated.scenario_id, evaluated.device_class, models.params, bases.basis_order
