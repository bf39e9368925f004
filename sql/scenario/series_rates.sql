-- The measured training rates of the same run as a power series (a capture's rate row shares
-- its series_id), for `edge-carbon scenario new --from-series`.
select
    throughput_id,
    model,
    model_params,
    precision,
    achieved_tflops,
    mfu,
    coalesce(is_synthetic, false) as is_synthetic
from staging.training_throughput
where series_id = $series_id
order by throughput_id
