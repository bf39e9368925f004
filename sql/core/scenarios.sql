-- core.scenarios: one row per scenario, one column per model parameter (a pivot of
-- core.scenario_parameters, so a new parameter row is a new column without editing this file).
-- A parameter a scenario does not set is null; the model (sql/model/evaluate.sql) names every
-- column it reads, so a parameter no scenario sets fails there with its name.
pivot (select scenario_id, parameter, value from core.scenario_parameters)
on parameter
using max(value)
group by scenario_id
order by scenario_id
