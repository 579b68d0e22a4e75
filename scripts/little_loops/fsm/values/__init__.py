"""The values in a loop file: their checks, ${...} references, interpolation, shell quoting."""
