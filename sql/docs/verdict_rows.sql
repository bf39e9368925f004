-- docs/findings.md's verdict table (edge-carbon docs): marts.verdict's rows it shows, headline
-- basis first per scenario and class: each network method at the frame's headline allocation
-- policy and resize power, and the method row that sets the verdict where it is another, each at
-- the edge's best and worst admissible designs (every row is in marts.verdict).
select *
from marts.verdict
where ((is_headline_policy and is_headline_resize_power)
       or (network_method = verdict_driver_method
           and embodied_policy = verdict_driver_policy
           and resize_power = verdict_driver_resize_power))
    and (is_best_design or is_worst_design)
order by accounting_frame, scenario_id, device_class, is_headline desc, basis, network_method,
    is_headline_policy desc, embodied_policy, is_headline_resize_power desc, resize_power, is_best_design desc
