-- asset: group=scenarios
-- core.variants: the parameter sets the model evaluates (core.model_evaluation) and how, one row per
-- scenario and variant: its family ('base': the scenario as it stands, its parameters core.scenarios'
-- row) and the rows it is evaluated on, as sql/model/model_rows.sql reads them. A base set is evaluated
-- on every basis (bases and patterns null: every row), every pattern its frame admits and the method rows
-- marts.verdict reads (method_filter 'all').
select
    scenario_id,
    variant_id,
    'base' as family,
    null::varchar[] as bases,
    'all' as basis_filter,
    null::varchar[] as patterns,
    false as own_pattern,
    false as designs,
    'all' as method_filter,
    null::struct(network_method varchar, policy varchar, resize_power varchar)[] as method_rows
from core.scenarios
order by scenario_id, variant_id
