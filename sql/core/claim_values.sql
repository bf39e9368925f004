-- asset: group=claims
-- core.claim_values: every parameter of every claim case (staging.claim_parameters) at its central
-- value and at the low and high ends of its sourced range (the central value where it has none),
-- a parameter that names a row of staging.network_energy taking that row's value. The claims'
-- marts read their inputs here. Grain: case x parameter x range end.
select
    p.case_id,
    p.parameter,
    e.range_end,
    case e.range_end
        when 'low' then coalesce(p.low, p.value, energy.low, energy.value)
        when 'high' then coalesce(p.high, p.value, energy.high, energy.value)
        else coalesce(p.value, energy.value)
    end as value,
    p.value_text
from staging.claim_parameters as p
left join staging.network_energy as energy on energy.factor_id = p.factor_id
cross join (values ('central'), ('low'), ('high')) as e (range_end)
order by p.case_id, p.parameter, e.range_end
