"""Breakpoints and stepping over a compiler pipeline (UI-free): see breakpoints.py for the
kinds of breakpoint, controller.py for the stepping commands."""

from workbench.debug.breakpoints import Breakpoint, BreakpointError, BreakpointList
from workbench.debug.controller import Stepper, Stop
from workbench.debug.facts import DumpFacts, StepInfo

__all__ = ["Breakpoint", "BreakpointError", "BreakpointList", "DumpFacts", "StepInfo",
           "Stepper", "Stop"]
