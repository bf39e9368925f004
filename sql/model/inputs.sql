-- Model inputs from drawn columns (model_draws: one row per draw) and the scenario's constant
-- parameters (model_constants: one row per scenario).
select *
from model_draws
inner join model_constants using (scenario_id)
