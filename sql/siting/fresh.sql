-- marts.siting on its first build: the rows just computed (the temporary table `siting_fresh`,
-- sql/marts/siting.sql), stamped with $run_id.
select fresh.*, $run_id as computed_run_id
from siting_fresh as fresh
