"""`ll-loop reject NAME [--note TEXT]`: answer a run's approval question with no."""

from __future__ import annotations

from typing import Any

from little_loops.cli.approve import add_answer_parser


def register(subparsers: Any, summary: str) -> None:
    add_answer_parser(subparsers, "reject", summary)
