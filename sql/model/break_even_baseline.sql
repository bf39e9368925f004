-- marts.break_even's baseline: R of each scenario's base case (core.model_evaluation, family 'base') on its headline
-- basis, at the frame's headline method row, per edge device class and communication pattern of $patterns (the
-- patterns every scenario is evaluated on): the row each parameter's break-even search starts from.
select scenario_id, device_class, pattern, reduction_factor as baseline_reduction_factor
from core.model_evaluation
where family = 'base' and is_headline and is_headline_method and is_headline_policy and is_headline_resize_power
    and list_contains($patterns, pattern)
order by scenario_id, device_class, pattern
