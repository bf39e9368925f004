-- The edge devices of marts.siting's parameter sets: a pair moves only the grid intensities, so
-- each pair's devices are its scenario's rows of core.scenario_devices.
select pairs.scenario_id, pairs.variant_id, devices.* exclude (scenario_id, variant_id, device_class, device_ids), devices.device_class
from siting_pairs as pairs
inner join core.scenario_devices as devices using (scenario_id)
