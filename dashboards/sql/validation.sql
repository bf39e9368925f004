-- Validation page: every case x mode x metric of marts.validation, published (x) against ours
-- (y) with the predictive interval, and LLMCarbon's prediction as a series of its own where it
-- covers the case.
with ours as (
    select
        case_id, model, mode, metric, unit, published_value,
        mode || ' (ours)' as series,
        computed_value as value,
        relative_error,
        computed_value, llmcarbon_value, llmcarbon_relative_error, input_status, inputs, published_citation,
        predicted_low, predicted_high, published_within_interval
    from marts.validation
),

llmcarbon as (
    select
        case_id, model, mode, metric, unit, published_value,
        'LLMCarbon' as series,
        llmcarbon_value as value,
        llmcarbon_relative_error as relative_error,
        computed_value, llmcarbon_value, llmcarbon_relative_error, input_status, inputs, published_citation,
        cast(null as double) as predicted_low, cast(null as double) as predicted_high,
        cast(null as boolean) as published_within_interval
    from marts.validation
    where llmcarbon_value is not null
)

select *, model || ', ' || replace(metric, '_', ' ') as row_label
from (select * from ours union all select * from llmcarbon)
order by case_id, metric, series
