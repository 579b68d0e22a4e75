"""The rules of a run: retries, waits, stalls, budget, limits, approval, commits; a module each."""
