-- Per scenario and edge device class: whether its fleet at the headline basis is infeasible
-- (marts.verdict's verdict says so: it cannot send its traffic over its link), for the pages that draw R.
select scenario_id, device_class, bool_or(starts_with(verdict, 'infeasible')) as infeasible
from marts.verdict
where is_headline
group by scenario_id, device_class
