"""Compile paradigm specs (goal, convergence, invariants, imperative) into FSM loops."""
