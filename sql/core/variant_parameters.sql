-- asset: group=scenarios
-- core.variant_parameters: each variant's overrides as rows, one per parameter it sets in place of its scenario's
-- (core.variants overrides, from its family's file sql/variants/<family>.sql); core.variant_inputs applies them.
select *
from (select scenario_id, variant_id, family, unnest(overrides, recursive := true) from core.variants)
order by scenario_id, variant_id, parameter
