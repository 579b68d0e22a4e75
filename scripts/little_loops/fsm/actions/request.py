"""What an action is asked to do and what it did: the request/result pair of every runner.

They are declared in `spec.py` with the action kind, whose functions take them and which a
request carries; this is the name every runner and kind imports them by.
"""

from __future__ import annotations

from little_loops.fsm.actions.spec import ActionRequest, ActionResult

__all__ = ["ActionRequest", "ActionResult"]
