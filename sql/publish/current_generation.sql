-- The warehouse's generation: that of its latest publish (0 before the first).
select coalesce(max(generation), 0) as generation from meta.generations;
