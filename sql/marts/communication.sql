-- asset: group=reviewers
-- marts.communication: communication energy and R per pattern, fleet and model size (the OPT family, 125M-66B:
-- core.model_evaluation's family 'model_sizes', each scenario's headline basis). Grain: scenario x edge device class
-- x model size x pattern (every pattern every scenario is evaluated on). Energy = device radio power x bytes / link
-- bandwidth + network kWh/GB x bytes, for the work the GPU would do over the horizon; link_time_share > 1 means the
-- links cannot carry the traffic in the training window, memory_feasible whether the state a device must hold fits.
-- The cloud side's cluster communication is the scenario's cloud_comm_energy_share. Answers objections 2 and 3.
select
    model.scenario_id,
    model.device_class,
    models.model_id,
    models.params,
    model.pattern,
    model.devices,
    model.devices_from,
    model.comm_gb,
    model.comm_kwh,
    model.comm_kgco2e,
    model.link_time_share,
    model.link_time_share <= 1 as link_feasible,
    model.memory_feasible,
    model.pipeline_stages,
    model.edge_added_kgco2e,
    model.cloud_total_kgco2e,
    model.reduction_factor
from core.model_evaluation as model
inner join staging.model_configs as models on models.model_id = model.variant_id
where model.family = 'model_sizes' and model.is_headline
order by model.scenario_id, model.device_class, models.params, model.pattern
