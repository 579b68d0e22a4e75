"""Load, check and model a loop file: the YAML reader, the typed model, the graph and its checks."""
