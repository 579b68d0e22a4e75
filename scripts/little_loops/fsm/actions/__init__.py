"""Run one action as a request/result pair: a module per kind (shell, agents, MCP), a registry."""
