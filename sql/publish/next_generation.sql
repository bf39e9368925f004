-- The run's publish as the next generation of the warehouse: the one after the highest it copied.
insert into meta.generations (generation, base_generation, run_id, published_at)
select coalesce(max(generation), 0) + 1, coalesce(max(generation), 0), $run_id, $published_at
from meta.generations
returning generation;
