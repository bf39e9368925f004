-- Model devices from drawn rows (model_device_draws: one row per draw and edge device class,
-- the drawn device fields) and each scenario's constant ones (model_device_constants: one row
-- per scenario and class). A field is wholly in one of the two (pipelines.model.formula).
select *
from model_device_draws
inner join model_device_constants using (scenario_id, device_class)
