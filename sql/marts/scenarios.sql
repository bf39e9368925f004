-- asset: group=marts
-- marts.scenarios: the scenarios the build evaluated (core.scenarios), for the pages' scenario
-- selectors, with the communication patterns the pages offer: each scenario's own (its
-- comm_pattern) and the compute-only pattern (the row of core.patterns that moves no bytes: R
-- without communication). Grain: scenario.
select
    scenarios.scenario_id,
    scenarios.comm_pattern,
    compute_only.pattern as compute_only_pattern
from core.scenarios as scenarios
cross join (select pattern from core.patterns where not moves_bytes) as compute_only
order by scenarios.scenario_id
