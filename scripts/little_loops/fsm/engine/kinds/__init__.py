"""The kinds of state (action, approval, sub-loop, terminal): one module each, one registry."""
