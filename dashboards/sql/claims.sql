-- Claims page: every published claim of marts.claims with its published and recomputed values, and both
-- relative to the published value (the midpoint of a published range), so claims in different units share
-- one axis. A claim that is not reproducible has no recomputed value: its ratios are null, its row stays.
with claims as (
    select
        *,
        case
            when published_low > 0 and published_high > 0 then (published_low + published_high) / 2
            when published_low > 0 then published_low
            when published_high > 0 then published_high
        end as published_reference
    from marts.claims
)

select
    *,
    published_low / published_reference as published_low_ratio,
    published_high / published_reference as published_high_ratio,
    recomputed_value / published_reference as recomputed_ratio,
    recomputed_low / published_reference as recomputed_low_ratio,
    recomputed_high / published_reference as recomputed_high_ratio
from claims
order by
    case status when 'reproduced' then 0 when 'differs' then 1 else 2 end,
    claim_id
