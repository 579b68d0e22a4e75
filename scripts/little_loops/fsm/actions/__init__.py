"""Run one action as a request/result pair: a module per kind (shell, Claude Code), a registry."""
