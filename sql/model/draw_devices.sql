-- The device rows of the draws: the drawn device fields (the table model_device_draws, one row per
-- draw and edge device class) and each scenario's constant ones (model_device_constants, one row
-- per scenario and class). A field is wholly in one of the two (pipelines.model.draw_tables).
select *
from model_device_draws
inner join model_device_constants using (scenario_id, device_class)
