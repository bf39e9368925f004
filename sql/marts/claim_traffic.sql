-- asset: group=claims
-- marts.claim_traffic: the wide-area traffic of each claim case whose pattern moves bytes
-- (staging.claim_parameters: a case names its comm_pattern, a row of core.patterns), and the
-- network's energy for it under each network method that charges a byte by the ends it passes
-- (core.network_methods: volume and marginal; the radio and line-time methods charge home devices
-- and lines, which a link between data centres does not pass). The bytes are the model's
-- comm_bytes over the pattern's coefficients; the energy its network_terms_kwh, weighed by the
-- method's row. Each case at its parameters' central values and at the low and high ends of their
-- sourced ranges (core.claim_values), for the cases that name their nodes and tokens. A derived result of
-- this project: no paper's claim. Grain: case x method x end.
with cases as (
    select
        case_id,
        range_end,
        max(value_text) filter (where parameter = 'comm_pattern') as comm_pattern,
        max(value) filter (where parameter = 'nodes') as nodes,
        max(value) filter (where parameter = 'params') as params,
        max(value) filter (where parameter = 'bytes_per_param') as bytes_per_param,
        max(value) filter (where parameter = 'comm_compression') as comm_compression,
        max(value) filter (where parameter = 'local_steps_per_sync') as local_steps_per_sync,
        max(value) filter (where parameter = 'tokens') as tokens,
        max(value) filter (where parameter = 'tokens_per_device_step') as tokens_per_device_step,
        max(value) filter (where parameter = 'network_kwh_per_gb') as network_kwh_per_gb,
        max(value) filter (where parameter = 'network_marginal_w_per_mbps') as network_marginal_w_per_mbps
    from core.claim_values
    group by case_id, range_end
),

traffic as (
    select
        cases.*,
        pattern.home_ends,
        pattern.server_ends,
        comm_bytes(pattern.sync_n, pattern.sync_n_minus_1, pattern.activations, pattern.stage_allreduce, nodes, params,
                   bytes_per_param, tokens, tokens_per_device_step, local_steps_per_sync, 0, 0, comm_compression, 1) as bytes
    from cases
    inner join core.patterns as pattern on pattern.pattern = cases.comm_pattern
    where pattern.moves_bytes and cases.nodes is not null and cases.tokens is not null
)

select
    traffic.case_id as scenario_id,
    method.network_method,
    traffic.comm_pattern,
    traffic.range_end,
    traffic.nodes,
    traffic.tokens / (traffic.nodes * traffic.tokens_per_device_step * traffic.local_steps_per_sync) as syncs,
    traffic.bytes / 1e12 as wan_tb,
    network_method_kwh(method.per_gb_one_end, method.per_gb_by_ends, method.marginal_by_ends, method.line_time,
                       network_terms_kwh(traffic.bytes / 1e9, traffic.home_ends, traffic.server_ends, traffic.network_kwh_per_gb, 0,
                                         traffic.network_marginal_w_per_mbps, 0, 0, 0, 0)) as network_kwh
from traffic
cross join core.network_methods as method
where method.per_gb_one_end = 0 and method.line_time = 0 and method.per_bit = 0
order by scenario_id, network_method, range_end
