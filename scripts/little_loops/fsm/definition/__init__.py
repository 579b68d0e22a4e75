"""Load, check and model a loop file: the YAML reader, the typed model, validation, the writer."""
