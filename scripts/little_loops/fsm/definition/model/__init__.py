"""The typed loop model and its key rows.

Each key's place, check, doc, default, field and spellings, and the dataclasses a loop file
is read into.
"""
