"""Run one action as a request/result pair; one module per kind of action (shell, Claude Code), one registry."""
