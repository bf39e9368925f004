"""The staged reference tables: device footprints and specs, network energy, training rates, grids."""
