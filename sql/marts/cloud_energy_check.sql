-- asset: group=marts
-- marts.cloud_energy_check: the model's cloud GPU energy per training token beside the energy per token
-- this project measured on that GPU. Grain: scenario x measured rate row. The scenarios are those whose
-- cloud GPU rate reads a measured training rate (cloud_gpu_measured_tflops with a factor_ref to a row of
-- staging.training_throughput: the measured_rates basis); the rows are every rate row of status measured
-- (not synthetic, with a power and a token rate) of the device that row names. The model's side is its
-- cloud GPU as sql/core/model_evaluation.sql computes it: the GPU's power (cloud_gpu_power_w, or the
-- alternative variant's) drawn at cloud_utilisation, for the time one token of the measured row's model
-- takes at the GPU's measured rate (training_flops(model_params, 1) FLOPs at gpu_measured_tflops). It is
-- the board alone, as NVML measures it: the node's host share (cloud_node_overhead_w), the fabric and the
-- PUE, which the model adds on top, are left out. The measured side is the row's power_w / tokens_per_s.
with rate_refs as (
    -- the training rate row each scenario's cloud_gpu_measured_tflops reads
    select
        scenario_id,
        regexp_extract(factor_ref, '^training_throughput\.throughput_id=(.+)\.[a-z0-9_]+$', 1) as model_rate_throughput_id
    from core.scenario_parameters
    where parameter = 'cloud_gpu_measured_tflops'
        and starts_with(factor_ref, 'training_throughput.throughput_id=')
),

cloud as (
    select
        scenarios.scenario_id,
        refs.model_rate_throughput_id,
        rate_row.device_id,
        gpu_variant(scenarios.cloud_gpu_variant, scenarios.cloud_alt_gpu_power_w, scenarios.cloud_gpu_power_w) as model_gpu_power_w,
        scenarios.cloud_utilisation as model_utilisation,
        -- the main GPU's measured rate, carried to the variant at the same share of its FP16/BF16 peak (as the model does)
        scenarios.cloud_gpu_measured_tflops
            * gpu_variant(scenarios.cloud_gpu_variant, scenarios.cloud_alt_gpu_fp16_tflops / scenarios.cloud_gpu_fp16_tflops, 1.0)
            as model_tflops
    from core.scenarios as scenarios
    inner join rate_refs as refs on refs.scenario_id = scenarios.scenario_id
    inner join staging.training_throughput as rate_row on rate_row.throughput_id = refs.model_rate_throughput_id
    where scenarios.cloud_gpu_measured_tflops is not null
),

measured as (
    select *
    from staging.training_throughput
    where status = 'measured'
        and not coalesce(is_synthetic, false)
        and power_w is not null
        and tokens_per_s is not null
),

paired as (
    select
        cloud.scenario_id,
        measured.throughput_id,
        measured.device_id,
        measured.model,
        measured.model_params,
        measured.precision,
        measured.batch_size,
        measured.sequence_length,
        measured.series_id,
        measured.power_boundary,
        measured.source_id,
        cloud.model_rate_throughput_id,
        cloud.model_gpu_power_w,
        cloud.model_utilisation,
        cloud.model_gpu_power_w * cloud.model_utilisation as model_board_power_w,
        cloud.model_tflops,
        cloud.model_tflops * 1e12 / training_flops(measured.model_params, 1) as model_tokens_per_s,
        measured.power_w as measured_power_w,
        measured.tokens_per_s as measured_tokens_per_s,
        measured.achieved_tflops as measured_tflops
    from cloud
    inner join measured on measured.device_id = cloud.device_id
)

select
    paired.*,
    model_board_power_w / model_tokens_per_s as model_j_per_token,
    measured_power_w / measured_tokens_per_s as measured_j_per_token,
    model_board_power_w / measured_power_w as power_ratio,
    model_tokens_per_s / measured_tokens_per_s as rate_ratio,
    (model_board_power_w / model_tokens_per_s) / (measured_power_w / measured_tokens_per_s) as energy_ratio
from paired
order by scenario_id, throughput_id
