"""A run on disk and its control: state and events, locks, worktrees, archive, notify."""
