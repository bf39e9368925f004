-- Every scenario id, for the scenario selectors.
select scenario_id from core.scenarios order by scenario_id
