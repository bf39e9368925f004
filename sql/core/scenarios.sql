-- core.scenarios: one row per scenario, one column per model parameter (a pivot of
-- core.scenario_parameters, so a new parameter row is a new column without editing this file).
-- A number is a double column; a parameter that names a method (value_text: accounting_frame,
-- comm_pattern, ...) is a text column holding the name, which the model joins to its reference
-- table (core.frames, ...). A parameter a scenario does not set is null; the model
-- (sql/core/model_evaluation.sql) names every column it reads, so a parameter no scenario sets fails
-- there with its name. getvariable('scenario_scope'): the scenarios a what-if computes (unset or empty:
-- every one; a variable, as a pivot takes no parameters); the pivot is of every scenario's rows, so
-- the columns are a full build's whichever scenarios it keeps. Each row is its scenario's base parameter set,
-- variant_id 'base': the rows the model evaluates as they stand (core.variants names them and how).
with numbers as (
    pivot (select scenario_id, parameter, value from core.scenario_parameters where value_text is null)
    on parameter
    using max(value)
    group by scenario_id
),

names as (
    pivot (select scenario_id, parameter, value_text from core.scenario_parameters where value_text is not null)
    on parameter
    using max(value_text)
    group by scenario_id
)

select numbers.scenario_id, 'base' as variant_id, * exclude (scenario_id)
from numbers
left join names using (scenario_id)
where coalesce(len(getvariable('scenario_scope')), 0) = 0 or list_contains(getvariable('scenario_scope'), scenario_id)
order by scenario_id
