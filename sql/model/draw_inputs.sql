-- The Monte Carlo and Sobol parameter sets: the drawn columns (the table model_draws, one row per
-- draw) and each scenario's constant parameters (model_constants, one row per scenario), both
-- loaded by pipelines.model.draw_tables.
select *
from model_draws
inner join model_constants using (scenario_id)
