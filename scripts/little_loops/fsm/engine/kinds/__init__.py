"""The state kinds (action, approval, sub-loop, learning, pr, fan-out, terminal): a module each, one registry."""
