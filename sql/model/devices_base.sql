-- The edge devices of the parameter sets the model evaluates unless a caller names others: the
-- rows of core.scenario_devices as variant 'base' (the view `model_devices`, one row per
-- scenario and edge device class, each class's <class>_<field> parameters under common names).
select scenario_id, 'base' as variant_id, * exclude (scenario_id, device_class, device_ids), device_class
from core.scenario_devices
