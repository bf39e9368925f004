-- The parameter sets the model evaluates unless a caller names others: every scenario of
-- core.scenarios as variant 'base' (the view `model_inputs`, one column per model parameter).
select scenario_id, 'base' as variant_id, * exclude (scenario_id)
from core.scenarios
