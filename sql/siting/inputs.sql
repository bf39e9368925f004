-- The parameter sets marts.siting evaluates (sql/core/model_evaluation.sql): each pair of the table
-- `siting_pairs` (sql/siting/pairs.sql) with its two intensities in place of the scenario's grid
-- parameters, every other parameter at the scenario's value (core.scenarios).
select
    pairs.scenario_id,
    pairs.variant_id,
    pairs.cloud_grid_gco2e_per_kwh,
    pairs.edge_grid_gco2e_per_kwh,
    own.* exclude (scenario_id, variant_id, cloud_grid_gco2e_per_kwh, edge_grid_gco2e_per_kwh)
from siting_pairs as pairs
inner join core.scenarios as own using (scenario_id)
