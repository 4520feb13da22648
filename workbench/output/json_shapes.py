"""Every `--json` shape the commands print, built in one place from the model and outcomes.

The shapes are the documented ones (README); a change to a shape is a change here.
"""

from __future__ import annotations

# --- ls ---------------------------------------------------------------------------------

# --- show, diff -------------------------------------------------------------------------

# --- replay, bisect, triage, mlir-replay ------------------------------------------------

# --- actions, report, iree --------------------------------------------------------------
