-- The communication patterns a page offers (marts.scenarios): compute only first, then each
-- scenario's own pattern, in the order of the first scenario that uses it.
select pattern
from (
    select compute_only_pattern as pattern, 0 as part, '' as first_scenario from marts.scenarios group by compute_only_pattern
    union all
    select comm_pattern, 1, min(scenario_id) from marts.scenarios group by comm_pattern
)
order by part, first_scenario
