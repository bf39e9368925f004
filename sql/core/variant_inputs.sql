-- core.variant_inputs: every parameter set the model evaluates (core.variants), one row per scenario and variant,
-- one column per model parameter: its scenario's rows of core.scenario_parameters with the variant's overrides
-- (core.variant_parameters) in their place, pivoted once, as core.scenarios pivots the scenarios (its 'base' rows
-- are core.scenarios' rows). Every column of core.scenarios is here, so a what-if's scope keeps a full build's.
with long as (
    select scenario_id, variant_id, parameter, value, value_text
    from core.variant_parameters
    union all
    select variants.scenario_id, variants.variant_id, own.parameter, own.value, own.value_text
    from core.variants as variants
    inner join core.scenario_parameters as own using (scenario_id)
    anti join core.variant_parameters as overrides using (scenario_id, variant_id, parameter)
),

numbers as (
    pivot (select scenario_id, variant_id, parameter, value from long where value_text is null)
    on parameter
    using max(value)
    group by scenario_id, variant_id
),

names as (
    pivot (select scenario_id, variant_id, parameter, value_text from long where value_text is not null)
    on parameter
    using max(value_text)
    group by scenario_id, variant_id
)

select *
from (select * from core.scenarios limit 0)
union all by name
(select * from numbers left join names using (scenario_id, variant_id))
order by scenario_id, variant_id
