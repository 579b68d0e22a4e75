"""Run one action (a shell command or a Claude Code prompt) as a request/result pair."""
