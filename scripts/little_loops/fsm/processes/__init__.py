"""Processes: where every child starts and ends (containment), process ids and trees, git."""
