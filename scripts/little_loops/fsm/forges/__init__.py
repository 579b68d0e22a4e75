"""Forges (GitHub through `gh`): push a branch, open or update its pull request, merge it."""
