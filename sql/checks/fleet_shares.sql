-- Mixed fleets whose classes' shares (<class>_fleet_share, core.scenario_devices) do not cover
-- the whole cloud job: each row a scenario, its shares' sum and the problem.
select scenario_id, sum(fleet_share) as share_sum, 'fleet shares sum to ' || round(sum(fleet_share), 4) || ', not 1' as problem
from core.scenario_devices
where fleet_share is not null
group by scenario_id
having abs(sum(fleet_share) - 1) > 1e-6
order by scenario_id
