"""The state kinds (action, approval, sub-loop, learning, pr, fan-out, terminal), one registry."""
