"""`python -m little_loops.cli` runs ll-loop."""

from little_loops.cli import main_loop

raise SystemExit(main_loop())
