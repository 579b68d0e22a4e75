"""The state kinds (action, approval, sub-loop, learning, terminal): a module each, one registry."""
