"""Processes outside the engine: process ids, process trees, git commands."""
