"""Reading a loop file.

YAML to plain data with the line of every key, the loop files of a folder, and reuse
(`from:`, `flow:`, fragments) resolved into one plain loop.
"""
