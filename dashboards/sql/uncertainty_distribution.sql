-- Uncertainty page: the histogram of R (marts.uncertainty_distribution) for the patterns in $patterns.
-- `infeasible`: the scenario's fleet of that class cannot send its traffic (dashboards/sql/fleet_feasibility.sql).
select scenario_id, device_class, pattern, bin_low, bin_high, draws, share, coalesce(f.infeasible, false) as infeasible
from marts.uncertainty_distribution
left join (
    -- include: fleet_feasibility
) as f using (scenario_id, device_class)
where list_contains($patterns::varchar[], pattern)
order by scenario_id, device_class, pattern, bin_low
