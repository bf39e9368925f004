-- marts.siting on its first build: the rows just computed (relation `fresh`), stamped with $run_id.
select fresh.*, $run_id as computed_run_id
from fresh
order by fresh.scenario_id, fresh.cloud_zone, fresh.edge_zone, fresh.device_class
