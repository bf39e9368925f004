-- marts.scenarios: the scenarios the build evaluated (core.scenarios), for the pages' scenario
-- selectors. Grain: scenario.
select scenario_id
from core.scenarios
order by scenario_id
