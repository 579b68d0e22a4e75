"""The front door: a loop file of any paradigm read, compiled and checked; its JSON Schema."""
