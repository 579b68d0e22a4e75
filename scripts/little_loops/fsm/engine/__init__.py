"""Step a loop: run an action, evaluate it, route, count passes, enforce limits, simulate."""
