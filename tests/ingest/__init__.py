"""Files to typed rows: parsers, energy, feeds, scenarios, registration."""
