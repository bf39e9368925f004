-- Parameter sets of core.variants that core.variant_inputs lacks, or holds more than once: the model would
-- evaluate them without their parameters, or twice.
select variants.scenario_id, variants.variant_id, 'no row in core.variant_inputs' as problem
from core.variants as variants
anti join core.variant_inputs as inputs using (scenario_id, variant_id)
union all
select scenario_id, variant_id, count(*) || ' rows in core.variant_inputs' as problem
from core.variant_inputs
group by scenario_id, variant_id
having count(*) > 1
order by scenario_id, variant_id
