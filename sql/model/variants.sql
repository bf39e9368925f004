-- Parameter sets that differ from their scenario's in the overridden parameters only: every
-- (scenario_id, variant_id) of the table `model_overrides` (scenario_id, variant_id, parameter,
-- value, value_text: a number, or the name of a method) with its overrides in place of the
-- scenario's own values (core.scenarios), every other parameter at the scenario's value. One row
-- per set, with core.scenarios' columns and types, so a set reads as a scenario does.
-- The overrides as one row per set (numbers and names pivoted as in sql/core/scenarios.sql) stacked
-- on the scenario's row; each column takes the override where one is set (arg_min skips nulls).
with numbers as (
    pivot (select scenario_id, variant_id, parameter, value from model_overrides where value_text is null)
    on parameter
    using max(value)
    group by scenario_id, variant_id
),

names as (
    pivot (select scenario_id, variant_id, parameter, value_text from model_overrides where value_text is not null)
    on parameter
    using max(value_text)
    group by scenario_id, variant_id
),

changed as (
    select *
    from (select distinct scenario_id, variant_id from model_overrides)
    left join numbers using (scenario_id, variant_id) left join names using (scenario_id, variant_id)
),

stacked as (
    select 1 as priority, sets.variant_id, own.*
    from core.scenarios as own
    inner join (select scenario_id, variant_id from changed) as sets using (scenario_id)
    union all by name
    select 0 as priority, * from changed
)

select scenario_id, variant_id, arg_min(columns(* exclude (scenario_id, variant_id, priority)), priority)
from stacked
group by scenario_id, variant_id
