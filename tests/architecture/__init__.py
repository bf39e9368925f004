"""The project's shape: layers, layout, the one formula, the asset graph, the code location, the wheel."""
