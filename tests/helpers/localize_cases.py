# ruff: noqa: E501  (HLO text lines as XLA prints them)
"""Planted miscompiles as HLO text pairs: (before, after, arguments, the planted instruction's
name and opcode, its computation)."""

from __future__ import annotations

import numpy as np

HEADER2 = "HloModule t, entry_computation_layout={(f32[4]{0}, f32[4]{0})->f32[4]{0}}\n\n"

# Outside any fusion: maximum became minimum, and the pass renamed everything.
ENTRY_BEFORE = HEADER2 + """ENTRY %main (x: f32[4], y: f32[4]) -> f32[4] {
  %x = f32[4]{0} parameter(0)
  %y = f32[4]{0} parameter(1)
  %m = f32[4]{0} multiply(%x, %y), metadata={op_name="jit(f)/mul" source_file="f.py" source_line=3}
  %e = f32[4]{0} maximum(%m, %x), metadata={op_name="jit(f)/max" source_file="f.py" source_line=4}
  ROOT %r = f32[4]{0} add(%e, %y), metadata={op_name="jit(f)/add" source_file="f.py" source_line=5}
}
"""
ENTRY_AFTER = HEADER2 + """ENTRY %main.1 (x.1: f32[4], y.1: f32[4]) -> f32[4] {
  %y.1 = f32[4]{0} parameter(1)
  %x.1 = f32[4]{0} parameter(0)
  %m.2 = f32[4]{0} multiply(%x.1, %y.1), metadata={op_name="jit(f)/mul" source_file="f.py" source_line=3}
  %e.2 = f32[4]{0} minimum(%m.2, %x.1), metadata={op_name="jit(f)/max" source_file="f.py" source_line=4}
  ROOT %r.2 = f32[4]{0} add(%e.2, %y.1), metadata={op_name="jit(f)/add" source_file="f.py" source_line=5}
}
"""
ENTRY_ARGS = [np.array([1, 2, 3, 4], np.float32), np.array([-1, 0.5, 2, 3], np.float32)]

FUSION_HEADER = ("HloModule t, entry_computation_layout={(f32[2,3]{1,0}, f32[3]{0})->"
                 "f32[2,3]{1,0}}\n\n")
# Inside a fusion the pass made: multiply became divide.
FUSION_BEFORE = FUSION_HEADER + """ENTRY %main (x: f32[2,3], y: f32[3]) -> f32[2,3] {
  %x = f32[2,3]{1,0} parameter(0)
  %y = f32[3]{0} parameter(1)
  %b = f32[2,3]{1,0} broadcast(%y), dimensions={1}
  %e = f32[2,3]{1,0} exponential(%x), metadata={op_name="jit(f)/exp"}
  %m = f32[2,3]{1,0} multiply(%e, %b), metadata={op_name="jit(f)/mul" source_file="f.py" source_line=7}
  ROOT %t = f32[2,3]{1,0} negate(%m), metadata={op_name="jit(f)/neg"}
}
"""
FUSION_AFTER = FUSION_HEADER + """%fused_computation (param_0: f32[2,3], param_1: f32[3]) -> f32[2,3] {
  %param_0 = f32[2,3]{1,0} parameter(0)
  %param_1 = f32[3]{0} parameter(1)
  %b.1 = f32[2,3]{1,0} broadcast(%param_1), dimensions={1}
  %e.1 = f32[2,3]{1,0} exponential(%param_0), metadata={op_name="jit(f)/exp"}
  %m.1 = f32[2,3]{1,0} divide(%e.1, %b.1), metadata={op_name="jit(f)/mul" source_file="f.py" source_line=7}
  ROOT %t.1 = f32[2,3]{1,0} negate(%m.1), metadata={op_name="jit(f)/neg"}
}

ENTRY %main (x: f32[2,3], y: f32[3]) -> f32[2,3] {
  %x = f32[2,3]{1,0} parameter(0)
  %y = f32[3]{0} parameter(1)
  ROOT %f = f32[2,3]{1,0} fusion(%x, %y), kind=kLoop, calls=%fused_computation
}
"""
FUSION_ARGS = [np.array([[-1, 0, 0.5], [0.25, -0.5, 1]], np.float32),
               np.array([0.5, 2, 3], np.float32)]

LOOP_HEADER = "HloModule t, entry_computation_layout={(f32[3]{0})->f32[3]{0}}\n\n"
# Four iterations of %body on (counter, value); the entry returns the value.
LOOP_CONDITION = """%cond (s: (s32[], f32[3])) -> pred[] {
  %s = (s32[], f32[3]{0}) parameter(0)
  %i = s32[] get-tuple-element(%s), index=0
  %n = s32[] constant(4)
  ROOT %lt = pred[] compare(%i, %n), direction=LT
}

"""
LOOP_ENTRY = """ENTRY %main (x: f32[3]) -> f32[3] {
  %x = f32[3]{0} parameter(0)
  %zero = s32[] constant(0)
  %init = (s32[], f32[3]{0}) tuple(%zero, %x)
  %w = (s32[], f32[3]{0}) while(%init), condition=%cond, body=%body
  ROOT %out = f32[3]{0} get-tuple-element(%w), index=1
}
"""
LOOP = LOOP_HEADER + LOOP_CONDITION + """%body (s.1: (s32[], f32[3])) -> (s32[], f32[3]) {
  %s.1 = (s32[], f32[3]{0}) parameter(0)
  %i.1 = s32[] get-tuple-element(%s.1), index=0
  %v = f32[3]{0} get-tuple-element(%s.1), index=1
  %one = s32[] constant(1)
  %i.2 = s32[] add(%i.1, %one)
  %half = f32[] constant(0.5)
  %hb = f32[3]{0} broadcast(%half), dimensions={}
  %v.2 = f32[3]{0} multiply(%v, %hb), metadata={op_name="jit(f)/while/body/mul" source_file="f.py" source_line=9}
  %v.3 = f32[3]{0} SIN(%v.2), metadata={op_name="jit(f)/while/body/sin" source_file="f.py" source_line=10}
  ROOT %t = (s32[], f32[3]{0}) tuple(%i.2, %v.3)
}

""" + LOOP_ENTRY
# In a loop body: sine became cosine.
LOOP_BEFORE = LOOP.replace("SIN(", "sine(")
LOOP_AFTER = LOOP.replace("SIN(", "cosine(")
LOOP_ARGS = [np.array([0.5, 1.0, -2.0], np.float32)]

REDUCE = """HloModule t, entry_computation_layout={(f32[2,4]{1,0})->f32[2]{0}}

%region (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %c = f32[] COMBINE(%a, %b)
}

ENTRY %main (x: f32[2,4]) -> f32[2] {
  %x = f32[2,4]{1,0} parameter(0)
  %zero = f32[] constant(0)
  %s = f32[2]{0} reduce(%x, %zero), dimensions={1}, to_apply=%region, metadata={op_name="jit(f)/reduce_sum" source_file="f.py" source_line=12}
  ROOT %out = f32[2]{0} exponential(%s)
}
"""
# A reduction's combiner: add became maximum (the reduce itself departs).
REDUCE_BEFORE = REDUCE.replace("COMBINE(", "add(")
REDUCE_AFTER = REDUCE.replace("COMBINE(", "maximum(")
REDUCE_ARGS = [np.array([[1, 2, 3, 4], [0.5, -1, 2, 0.25]], np.float32)]

# No single culprit: the departing root's operand has no counterpart before the pass.
UNMATCHED_BEFORE = HEADER2 + """ENTRY %main (x: f32[4], y: f32[4]) -> f32[4] {
  %x = f32[4]{0} parameter(0)
  %y = f32[4]{0} parameter(1)
  ROOT %r = f32[4]{0} add(%x, %y)
}
"""
UNMATCHED_AFTER = HEADER2 + """ENTRY %main (x: f32[4], y: f32[4]) -> f32[4] {
  %x = f32[4]{0} parameter(0)
  %y = f32[4]{0} parameter(1)
  %n = f32[4]{0} negate(%x)
  ROOT %r = f32[4]{0} add(%n, %y)
}
"""

# In a loop body, from the third iteration on: the compare's direction GE became GT.
LATE_LOOP = LOOP_HEADER + LOOP_CONDITION + """%body (s.1: (s32[], f32[3])) -> (s32[], f32[3]) {
  %s.1 = (s32[], f32[3]{0}) parameter(0)
  %i.1 = s32[] get-tuple-element(%s.1), index=0
  %v = f32[3]{0} get-tuple-element(%s.1), index=1
  %one = s32[] constant(1)
  %two = s32[] constant(2)
  %i.2 = s32[] add(%i.1, %one)
  %late = pred[] compare(%i.1, %two), direction=DIRECTION, metadata={op_name="jit(f)/while/body/ge" source_file="f.py" source_line=14}
  %lb = pred[3]{0} broadcast(%late), dimensions={}
  %neg = f32[3]{0} negate(%v)
  %v.2 = f32[3]{0} select(%lb, %neg, %v)
  ROOT %t = (s32[], f32[3]{0}) tuple(%i.2, %v.2)
}

""" + LOOP_ENTRY
LATE_LOOP_BEFORE = LATE_LOOP.replace("DIRECTION", "GE")
LATE_LOOP_AFTER = LATE_LOOP.replace("DIRECTION", "GT")
LATE_LOOP_ARGS = LOOP_ARGS

# The pass fused what the earlier step computed in the entry, and (the planted bug) made the
# negation after the fusion an absolute value: the fusion computes what the earlier step did.
FUSED_BEFORE = FUSION_BEFORE
FUSED_AFTER = FUSION_HEADER + """%fused_computation (param_0: f32[2,3], param_1: f32[3]) -> f32[2,3] {
  %param_0 = f32[2,3]{1,0} parameter(0)
  %param_1 = f32[3]{0} parameter(1)
  %b.1 = f32[2,3]{1,0} broadcast(%param_1), dimensions={1}
  %e.1 = f32[2,3]{1,0} exponential(%param_0), metadata={op_name="jit(f)/exp"}
  ROOT %m.1 = f32[2,3]{1,0} multiply(%e.1, %b.1), metadata={op_name="jit(f)/mul" source_file="f.py" source_line=7}
}

ENTRY %main (x: f32[2,3], y: f32[3]) -> f32[2,3] {
  %x = f32[2,3]{1,0} parameter(0)
  %y = f32[3]{0} parameter(1)
  %f = f32[2,3]{1,0} fusion(%x, %y), kind=kLoop, calls=%fused_computation
  ROOT %t.1 = f32[2,3]{1,0} abs(%f), metadata={op_name="jit(f)/neg"}
}
"""

COUNTED_HEADER = ("HloModule t, entry_computation_layout={(f32[3]{0})->(f32[3]{0}, s32[])}"
                  "\n\n")
# A loop counting its iterations in a second counter: after the pass (as XLA's
# simplify-while-loops does) the loop passes that counter through and the value after the loop
# is worked out from the trip count, which nothing reads: the loop's element 1 differs, dead.
COUNTED = COUNTED_HEADER + """%cond (s: (s32[], s32[], f32[3])) -> pred[] {
  %s = (s32[], s32[], f32[3]{0}) parameter(0)
  %i = s32[] get-tuple-element(%s), index=0
  %n = s32[] constant(4)
  ROOT %lt = pred[] compare(%i, %n), direction=LT
}

%body (s.1: (s32[], s32[], f32[3])) -> (s32[], s32[], f32[3]) {
  %s.1 = (s32[], s32[], f32[3]{0}) parameter(0)
  %i.1 = s32[] get-tuple-element(%s.1), index=0
  %c.1 = s32[] get-tuple-element(%s.1), index=1
  %v = f32[3]{0} get-tuple-element(%s.1), index=2
  %one = s32[] constant(1)
  %i.2 = s32[] add(%i.1, %one)
  %c.2 = s32[] COUNT
  %v.2 = f32[3]{0} sine(%v)
  ROOT %t = (s32[], s32[], f32[3]{0}) tuple(%i.2, %c.2, %v.2)
}

ENTRY %main (x: f32[3]) -> (f32[3], s32[]) {
  %x = f32[3]{0} parameter(0)
  %zero = s32[] constant(0)
  %init = (s32[], s32[], f32[3]{0}) tuple(%zero, %zero, %x)
  %w = (s32[], s32[], f32[3]{0}) while(%init), condition=%cond, body=%body
  %v.out = f32[3]{0} get-tuple-element(%w), index=2
  %i.out = s32[] get-tuple-element(%w), index=0
  %c.out = s32[] get-tuple-element(%w), index=1
  %c.fixed = s32[] add(%c.out, %i.out)
  %state = (s32[], s32[], f32[3]{0}) tuple(%i.out, %c.fixed, %v.out)
  %v.state = f32[3]{0} get-tuple-element(%state), index=2
  ROOT %r = (f32[3]{0}, s32[]) tuple(%v.state, %i.out)
}
"""
COUNTED_BEFORE = COUNTED.replace("COUNT", "add(%c.1, %one)")
COUNTED_AFTER = COUNTED.replace("COUNT", "copy(%c.1)")
