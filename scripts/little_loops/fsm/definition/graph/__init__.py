"""The loop as a graph.

Its states and edges, the transitions a state declares, where a verdict routes, and the
verdicts each state can give.
"""
