"""The search for the culprit, value by value as the later step makes them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from workbench.hlo_ir import Instruction, LiteralValue
from workbench.replay.judge.compare import Comparison, Truth, compare
from workbench.replay.localize.recorder import Enough, bit_identical, plain_value
from workbench.replay.localize.result import DynKey
from workbench.replay.localize.truth import ValueTruth

if TYPE_CHECKING:
    from workbench.replay.localize.context import LocalizeContext

Found = tuple[DynKey, Comparison, LiteralValue, "Truth | None", list[DynKey]]
WEAK = "weak"  # an agreement state: departs, but only an opcode-changed match says so
UNMATCHED = "unmatched"  # an operand's state when it has no counterpart: not yet judged


@dataclass
class Search:
    """The search for the culprit, value by value as the later step makes them: the first
    value that departs while every operand agrees. Values are judged in evaluation order; a
    value with an operand that does not agree departs downstream and is not compared at all,
    and the search (and the evaluation) stops at a culprit matched by structure. An operand
    with no counterpart (what a rewrite made) does not depart: the value reading it is
    compared, and agreeing, shows the rewrite legal.

    A departing value matched only by its operands (the pass changed its opcode) may be a
    legal rewrite (`x / sqrt(y)` -> `x * rsqrt(y)`): it is a *candidate*, and its consumers
    are still judged. One that agrees with its counterpart absorbs the difference and clears
    the candidate; one whose consumers all depart (or, with none, whose results depart) is the
    culprit."""

    localizer: LocalizeContext
    agrees: dict[DynKey, bool | str] = field(default_factory=dict)
    identical: set[DynKey] = field(default_factory=set)  # bit for bit the earlier value
    reasons: list[str] = field(default_factory=list)
    departing: int = 0
    judged_by_bound: int = 0
    missing: int = 0  # matched values the earlier step never made
    culprit: Found | None = None
    candidates: dict[DynKey, Found] = field(default_factory=dict)  # weak, not yet absorbed
    waiting: dict[DynKey, int] = field(default_factory=dict)  # candidate -> consumers to see
    absorbed: list[DynKey] = field(default_factory=list)  # candidates a consumer absorbed

    def known(self, key: DynKey) -> Any:
        """The earlier step's value of an instruction that computes the same thing
        (`StepPair.same_computation`) on operands that are bit for bit the earlier step's:
        the evaluator is deterministic, so that is its value, and it is not computed again."""
        localizer = self.localizer
        site_key, loops = key
        settled = localizer.pair.settled().get(site_key)
        if settled is not None:
            return localizer.before_value(settled)  # a placeholder of `unsettled_module`
        counterpart = localizer.pair.same_computation(site_key)
        if counterpart is None:
            return None
        identical = self.identical
        for operand in localizer.pair.visit_info(site_key)[1]:
            if (operand, loops) not in identical:
                return None
        value = localizer.before_value((counterpart, loops))
        if value is not None:  # judged here: `visit` has nothing left to do
            identical.add(key)
            self.agrees[key] = True
        return value

    def visit(self, key: DynKey, instruction: Instruction, value: Any) -> None:
        if key in self.identical:
            return  # a value `known` gave
        localizer = self.localizer
        site_key, loops = key
        counterpart, site_operands, carried = localizer.pair.visit_info(site_key)
        if counterpart is None:
            return  # no counterpart, or the same value as another site (a fusion's result)
        before_key = (counterpart, loops)
        reference = localizer.before_value(before_key)
        if reference is None:
            self.missing += 1
            return
        plain = plain_value(value, instruction, localizer.sub_byte)
        if carried:
            # A loop's or branch's parameter: its value comes from the loop's operand or the
            # previous iteration, judged there; a departure here is carried, never a culprit.
            if bit_identical(reference, plain):
                self.identical.add(key)
                self.agrees[key] = True
                return
            plain = localizer.pair.as_read(site_key, reference, plain)
            self.agrees[key] = compare(reference, plain,
                                       truth=ValueTruth(localizer, before_key)).ok
            if not self.agrees[key]:
                self._downstream(instruction, [])
            return
        identical = self.identical
        if all((o, loops) in identical for o in site_operands) and bit_identical(reference, plain):
            identical.add(key)  # the common case before the culprit, made short
            self.agrees[key] = True
            return
        operands = [(o, loops) for o in site_operands]
        # An operand with no counterpart (a rewrite's new instruction) neither agrees nor
        # departs: this value is judged by its own comparison (`UNMATCHED`).
        counterparts = localizer.matching.counterpart
        states = [self.agrees.get(o, False if o[0] in counterparts else UNMATCHED)
                  for o in operands]
        if all(state is True for state in states) and bit_identical(reference, plain):
            identical.add(key)
            self.agrees[key] = True
            return
        plain = localizer.pair.as_read(site_key, reference, plain)  # a tuple: what results read
        weak = list(dict.fromkeys(o for o, s in zip(operands, states, strict=True) if s == WEAK))
        unmatched = [o for o, s in zip(operands, states, strict=True) if s == UNMATCHED]
        if any(state is False for state in states):
            self.agrees[key] = bit_identical(reference, plain)
            if self.agrees[key]:
                self.identical.add(key)
            else:
                self._downstream(instruction, [o for o, state in zip(operands, states,
                                                                     strict=True)
                                               if state is False])
                self._consumer_departs(weak)
            return
        # An opcode-changed match may be a rewrite its consumers absorb: their shadows are
        # made in the same evaluation.
        matching = localizer.matching
        also = {(matching.counterpart[user], loops) for user in matching.users.get(site_key, ())
                if site_key in matching.weak and user in matching.counterpart}
        source = ValueTruth(localizer, before_key, also, identical)
        comparison = compare(reference, plain, truth=source)
        if comparison.bound is not None:
            self.judged_by_bound += 1
        if comparison.ok:
            self.agrees[key] = True  # within the tolerance, or within the rounding error bound
            for operand in weak:
                if self.candidates.pop(operand, None) is not None:  # a rewrite it absorbs
                    self.absorbed.append(operand)
            return
        if weak or unmatched:
            self.agrees[key] = False
            self._downstream(instruction, [*weak, *unmatched])
            self._consumer_departs(weak)
            return
        if not localizer.pair.is_live(site_key):
            self.agrees[key] = False
            return  # no result depends on it: whatever it holds, it is not the culprit
        self.departing += 1
        found = (key, comparison, plain, source.last, operands)
        if site_key in matching.weak and matching.users.get(site_key):
            self.agrees[key] = WEAK
            self.candidates[key] = found
            self.waiting[key] = len(matching.users[site_key])
            return
        if instruction.opcode in ("while", "conditional") and self.candidates:
            found = next(iter(self.candidates.values()))  # the candidate in its bodies
        self.culprit = found
        raise Enough()

    def legal_rewrites(self) -> list[DynKey]:
        """Values the pass rewrote (matched by less than structure) judged legal: within
        the rounding error bound of their counterparts, or absorbed by a consumer that is."""
        weak = self.localizer.matching.weak
        agreeing = [k for k, state in self.agrees.items() if state is True and k[0] in weak]
        return list(dict.fromkeys([*agreeing, *self.absorbed]))

    def _consumer_departs(self, weak: list[DynKey]) -> None:
        """A consumer of candidates departed too: once every consumer of one has, nothing
        can absorb it any more, and it is the culprit."""
        for operand in weak:
            if operand not in self.candidates:
                continue
            self.waiting[operand] -= 1
            if self.waiting[operand] == 0:
                self.culprit = self.candidates[operand]
                raise Enough()

    def _downstream(self, instruction: Instruction, operands: list[DynKey]) -> None:
        matching = self.localizer.matching
        self.departing += 1
        if len(self.reasons) < 3:
            names = ", ".join(matching.sites_after[o[0]].instruction.name
                              + (" (departs)" if o in self.agrees else " (no counterpart)")
                              for o in operands)
            self.reasons.append(f"{instruction.name} departs with its operands {names}"
                                if operands else f"{instruction.name} departs as it comes "
                                "into a loop body or branch")
