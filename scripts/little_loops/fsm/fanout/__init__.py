"""Fan-out: several child runs at once, each in its own git worktree, joined and merged."""
