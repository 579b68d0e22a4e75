"""The checks of a loop file.

Its keys and values, its graph as a state machine, and the static analysis of mistakes that
would only show up while it runs.
"""
