-- Family 'base': each scenario as it stands (its row of core.scenarios, no override), evaluated on every basis,
-- every communication pattern its frame admits and the method rows marts.verdict reads (method_filter 'all'):
-- the rows marts.verdict, marts.lifecycle_carbon and marts.fleet_equivalence read.
select scenario_id, 'base' as variant_id, 'base' as family, 'all' as method_filter
from core.scenarios
order by scenario_id
