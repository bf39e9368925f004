-- Scenarios that name no claim they test, or a claim_id that is no claim of staging.claims: each row
-- a scenario, the claim it names (null: none) and the scenario file and line that named it.
select scenarios.scenario_id, named.value_text as claim_id, named.defined_in
from (select distinct scenario_id from core.scenario_parameters) as scenarios
left join core.scenario_parameters as named on named.scenario_id = scenarios.scenario_id and named.parameter = $parameter
where named.value_text is null or named.value_text not in (select claim_id from staging.claims)
order by scenarios.scenario_id
