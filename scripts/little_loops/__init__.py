"""little-loops: finite-state automation loops for software projects (`ll-loop`)."""

__version__ = "0.1.0"
