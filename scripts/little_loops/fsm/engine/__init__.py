"""Step a loop: interpolate, run, evaluate, route, count passes, enforce limits."""
