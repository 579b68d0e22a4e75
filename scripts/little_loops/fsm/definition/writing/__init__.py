"""A loop written back out.

As YAML the loader reads back, migrated to our spelling, or drawn as a diagram.
"""
