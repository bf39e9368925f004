-- core.scenario_devices: the edge devices as rows, one per scenario and edge device class (the
-- macro device_rows of sql/model/macros.sql over core.scenarios, each scenario's base parameter set), with
-- the devices each class's rows were read from: the keys of the factor_refs
-- (`<table>.<key_column>=<key>.<value_column>`) of its `<class>_<field>` rows. $suffixes: the
-- field suffixes (`_train_power_w`, ...), so a row belongs to the class its name starts with.
with classes as (
    select scenario_id, left(parameter, length(parameter) - length('_train_power_w')) as device_class
    from core.scenario_parameters
    where suffix(parameter, '_train_power_w')
),

refs as (
    select
        classes.scenario_id,
        classes.device_class,
        regexp_extract(p.factor_ref, '^[a-z_]+\.[a-z_]+=(.+)\.[a-z0-9_]+$', 1) as device_id
    from classes
    inner join core.scenario_parameters as p
        on p.scenario_id = classes.scenario_id
        and list_contains($suffixes, substr(p.parameter, length(classes.device_class) + 1))
        and starts_with(p.parameter, classes.device_class || '_')
    where p.factor_ref is not null
),

device_ids as (
    select scenario_id, device_class, string_agg(distinct device_id, ', ' order by device_id) as device_ids
    from refs
    where device_id <> ''
    group by scenario_id, device_class
)

select devices.scenario_id, devices.variant_id, devices.device_class, device_ids.device_ids,
    devices.* exclude (scenario_id, variant_id, device_class)
from device_rows('core.scenarios') as devices
left join device_ids using (scenario_id, device_class)
order by devices.scenario_id, devices.device_class
