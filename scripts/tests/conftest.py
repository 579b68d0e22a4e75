"""Shared fixtures: small factories for loop projects and processes."""

from __future__ import annotations
