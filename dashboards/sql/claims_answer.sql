-- Claims page: this project's own verdict on the question the claims argue (marts.verdict's answer rows: outside the
-- paper's frame, the headline basis and the edge's best admissible design at the method row that sets the verdict).
select
    scenario_id,
    device_class,
    edge_design,
    reduction_factor_with_comm,
    verdict
from marts.verdict
where is_answer
order by scenario_id, device_class
