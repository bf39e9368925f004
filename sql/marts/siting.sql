-- marts.siting (its rows before their run stamp: sql/siting/fresh.sql, refresh.sql). Grain:
-- scenario x cloud zone x edge zone (or the scenario's edge mix) x edge device class.
-- R for every pair of sql/siting/pairs.sql (the table `siting_pairs`), from the model's one formula (the
-- table macro model_rows, sql/model/model_rows.sql) over the pairs' parameter sets (`siting_inputs`: each
-- pair's two grid intensities in place of the scenario's, variant_id 'cloud>edge'), their device rows
-- (`siting_devices`) and their variant rows (`siting_variants`, family 'siting'), read as marts.verdict reads
-- its answer (the table `siting_answers`, sql/siting/answers.sql): on the scenario's headline basis, compute
-- only and with the answer's edge design (the best admissible design at the scenario's own intensities), under
-- the method row that sets the verdict for the scenario and class (verdict_driver_method, _policy and
-- _resize_power). Compute-only R does not depend on the network method or the resize power, only on the policy.
-- The four tables are the files of sql/siting/ of those names, in the order pipelines.defs.assets.siting's
-- SITING_STEPS runs them: the pairs depend on live intensities and the answers on marts.verdict, which reads
-- core.model_evaluation, so siting is not a family of that table.
-- Deterministic: no draws.
-- each scenario's accounting frame (a row of core.frames) and named communication pattern
with frames as (
    select scenario_id, accounting_frame, comm_pattern
    from core.scenarios
    inner join core.frames using (accounting_frame)
),

evaluated as (
    select
        e.scenario_id,
        e.variant_id,
        e.device_class,
        e.basis,
        a.edge_design,
        e.network_method,
        e.embodied_policy,
        e.resize_power,
        any_value(e.reduction_factor) filter (where not pattern.moves_bytes) as reduction_factor,
        any_value(e.reduction_factor) filter (where e.pattern = a.edge_design) as reduction_factor_with_comm,
        any_value(e.link_feasible) filter (where e.pattern = a.edge_design) as link_feasible_with_comm
    from model_rows('siting_inputs', 'siting_devices', 'siting_variants') as e
    -- compute only: the pattern that moves no bytes (core.patterns)
    inner join core.patterns as pattern on pattern.pattern = e.pattern
    inner join siting_answers as a on a.scenario_id = e.scenario_id and a.device_class = e.device_class and a.basis = e.basis
        and a.network_method = e.network_method and a.embodied_policy = e.embodied_policy and a.resize_power = e.resize_power
    where not pattern.moves_bytes or e.pattern = a.edge_design
    group by e.scenario_id, e.variant_id, e.device_class, e.basis, a.edge_design, e.network_method, e.embodied_policy, e.resize_power
)

select
    p.scenario_id,
    f.accounting_frame,
    p.cloud_zone,
    p.edge_zone,
    p.edge_mix,
    e.device_class,
    e.basis,
    f.comm_pattern,
    e.edge_design,
    e.network_method,
    e.embodied_policy,
    e.resize_power,
    e.reduction_factor,
    e.reduction_factor_with_comm,
    e.link_feasible_with_comm,
    p.cloud_grid_gco2e_per_kwh as cloud_gco2e_per_kwh,
    p.edge_grid_gco2e_per_kwh as edge_gco2e_per_kwh,
    p.cloud_intensity_basis,
    p.edge_intensity_basis,
    p.year,
    p.cloud_fetched_at,
    p.edge_fetched_at
from siting_pairs as p
inner join frames as f on f.scenario_id = p.scenario_id
inner join evaluated as e on e.scenario_id = p.scenario_id and e.variant_id = p.variant_id
