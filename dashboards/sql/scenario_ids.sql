-- Every scenario id, for the scenario selectors (marts.scenarios).
select scenario_id from marts.scenarios order by scenario_id
