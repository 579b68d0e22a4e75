"""Paradigms: short loop specs (goal, convergence, ...) compiled into FSMs; see `registry`."""
