"""A run on disk and its control: the .running layout, state and events, locks, processes, spend."""
