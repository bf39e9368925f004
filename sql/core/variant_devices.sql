-- asset: group=scenarios
-- core.variant_devices: every parameter set's edge devices as rows (the macro device_rows of sql/model/macros.sql
-- over core.variant_inputs), one per scenario, variant and edge device class: the devices the model reads
-- (core.model_evaluation). A base set's rows are core.scenario_devices' (which also names their devices).
select * from device_rows('core.variant_inputs')
order by scenario_id, variant_id, device_class
