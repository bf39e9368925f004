-- Claims page: the wide-area traffic of each case whose pattern moves bytes and its network energy per
-- network method (marts.claim_traffic), at one end of the parameters' ranges ($range_end: central, low, high).
select
    scenario_id,
    comm_pattern,
    network_method,
    nodes,
    syncs,
    wan_tb,
    network_kwh
from marts.claim_traffic
where range_end = $range_end
order by scenario_id, network_method
