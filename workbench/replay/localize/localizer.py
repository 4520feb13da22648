"""From the culprit pass to the culprit instruction: which value did the pass get wrong?

Two steps of an HLO module (the step before a pass and the step after it) are evaluated on the
same inputs while an observer (`hlo.interpreter.Observer`) sees every intermediate value:
the entry, fusion and called bodies, loop bodies once per iteration. Instructions of the later
step are matched to the earlier step's (`match.py`), each matched value is judged
against its counterpart by the rule verdicts use (`compare` with a `TruthSource`: within the
tolerance, else within the rounding error bound of the f64 truth, then of the truth on
perturbed inputs; `error_bound.truth_of`), and the culprit is the first value of the later
step, in evaluation order, that departs while every operand agrees (`search.Search`).

The truth of a value is that of its *region* (`regions.region_module`): the earlier step's
instructions making it, back to the values both steps made bit for bit alike, evaluated in f64
on those values (and on them perturbed). Rounding before them is common to both steps and
explains no difference between them; a step treated as one region is what a verdict judges.
Where no region is found (it would pass a loop's result, or grow past `REGION_LIMIT`), the
truth is the earlier step's own f64 shadow (`truth.Shadows`, `regions.cone_module`).

Cost and memory: the earlier step as far as the later step gets (`earlier_step.EarlierStep`:
the two are evaluated in turns, keeping the earlier step's values some later instruction is
matched to); of the later step, only what it does not make bit for bit as the earlier step did
(`StepPair.settled`: an instruction computing the same as its counterpart on such values,
whatever the inputs; `unsettled_module`), judged as it is made up to the culprit, so it is not
kept (where the values turn out alike anyway, the earlier step's are taken, `Search.known`);
and the regions of the values judged beyond the tolerance. Values kept are counted with what
the evaluations running at once hold (`Interpreter.holds_at_once`: the earlier and the later
step, and a shadow, each sized from its declared shapes) against the memory limit
(`--memory-limit`, `replay.memory`): beyond it the earlier step's values are spilled to a
temporary folder (`spill.KeptValues`), and anything else kept stops localization with a clear
error.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.gc_pause import gc_paused
from workbench.hlo_ir import HloModule, Instruction, LiteralValue
from workbench.model import Step
from workbench.replay.judge.compare import Comparison, Truth, compare
from workbench.replay.localize.earlier_step import EarlierStep
from workbench.replay.localize.match import (
    Key,
    Matching,
    Site,
)
from workbench.replay.localize.pair import pair_of
from workbench.replay.localize.recorder import Enough, Recorder
from workbench.replay.localize.regions import cone_module, region_module
from workbench.replay.localize.result import (
    DynKey,
    InstructionRef,
    Localization,
    LocalizeError,
    NotJudged,
    Region,
    describe,
    differing_elements,
)
from workbench.replay.localize.search import Search
from workbench.replay.localize.spill import KeptValues
from workbench.replay.localize.truth import Shadows, ValueTruth, evaluation_errors
from workbench.replay.spill import value_bytes

if TYPE_CHECKING:
    from workbench.replay.hlo.interpreter import Interpreter
    from workbench.replay.judge.noise.model import Noise

class Localizer:
    """Localize the departure between `before` and `after` (two loaded HLO modules)."""

    def __init__(self, before: HloModule, after: HloModule,
                 arguments: Sequence[LiteralValue], memory_limit: int | None = None) -> None:
        from workbench.replay.processes import memory

        self.before = before
        self.after = after
        self.arguments = list(arguments)
        # The values kept plus what the evaluations hold stay within it (default: the limit
        # in force, `--memory-limit`).
        self.memory_limit = memory.memory_limit() if memory_limit is None else memory_limit
        self.evaluations_hold = 0  # bytes the evaluations under way hold at once, at most
        self._holds: dict[int, int] = {}  # by module: what one evaluation of it holds
        pair = self.pair = pair_of(before, after)
        self.matching: Matching = pair.matching
        root = ((), before.entry.root_name)
        self.root_before = self.matching.alias_before.get(root, root)
        # The earlier-step sites to keep: counterparts, and the result (the outputs' truth).
        self.wanted = {*self.matching.counterpart.values(), self.root_before}
        self.before_values = KeptValues()  # made by `earlier`
        self.earlier: EarlierStep | None = None
        self.shadows = Shadows(self, perturbed=False)
        self.perturbed = Shadows(self, perturbed=True)
        self._shadow_module: HloModule | None = None
        self._cones: dict[frozenset[str], HloModule] = {}
        self._regions: dict[DynKey, Region | None] = {}
        self._region_values: dict[tuple[DynKey, bool], LiteralValue | None] = {}
        self._region_noise: dict[DynKey, Noise | None] = {}
        self._interpreters: dict[int, Interpreter] = {}  # by module: plans compiled once
        from workbench.replay.hlo.dtypes import SUB_BYTE_WIDTHS

        self.sub_byte = SUB_BYTE_WIDTHS  # element types the evaluator stores a byte each
        self.evaluations = 0
        self.kept = 0
        self.peak = 0

    def keep_before(self, key: DynKey, value: LiteralValue) -> None:
        """Keep the earlier step's value at `key`: in memory within the limit, else spilled."""
        size = value_bytes(value)
        if (self.kept + self.evaluations_hold + size > self.memory_limit
                and self.before_values.spill(key, value)):
            return
        self.before_values[key] = value
        self.keep(value)

    def keep(self, value: Any) -> None:
        self.kept += value_bytes(value)
        self.peak = max(self.peak, self.kept)
        self._check_memory()

    def _check_memory(self) -> None:
        if self.kept + self.evaluations_hold > self.memory_limit:
            from workbench.sizes import format_size

            raise LocalizeError(
                f"the values localization keeps ({format_size(self.kept)}) and what its "
                f"evaluations hold at once ({format_size(self.evaluations_hold)}) exceed the "
                f"memory limit of {format_size(self.memory_limit)}; raise it with "
                "--memory-limit, or localize a pair of steps closer to the output")

    def before_value(self, key: DynKey) -> LiteralValue | None:
        """The earlier step's value at `key`, made now if the earlier step has not got there
        yet (None when it never makes it)."""
        assert self.earlier is not None, "the earlier step is evaluated while `run` runs"
        return self.earlier.get(key)

    def shadow_module(self) -> HloModule:
        """The earlier step with every float type in f64 (made once)."""
        from workbench.replay.errors import Unsupported
        from workbench.replay.hlo.shadow import shadow_module

        if self._shadow_module is None:
            try:
                self._shadow_module = shadow_module(self.before)
            except Unsupported as error:
                raise NotJudged(f"unsupported: {error.what}") from None
        return self._shadow_module

    def cone(self, module: HloModule, names: frozenset[str]) -> HloModule:
        """`cone_module(module, names)` of the shadow module, made once (both shadows ask
        for the same values, and then share the compiled plans too)."""
        cut = self._cones.get(names)
        if cut is None:
            cut = self._cones[names] = cone_module(module, set(names))
        return cut

    def region(self, key: DynKey, identical: set[DynKey]) -> Region | None:
        """Where the earlier step's value at `key` is made from values both steps made bit
        for bit alike (`identical`, later-step keys): the instructions making it back to
        those values (`regions.region_module`), and the keys of the values it starts from.
        Rounding before them is the same in both steps and explains no difference between
        them, so the value's truth is its region's in f64 on those values. None when no
        such region is found (see `region_module`); made once per key."""
        if key in self._regions:
            return self._regions[key]
        site_key, loops = key
        matching, later = self.matching, self.pair.later_sites()

        def cut(made: Key) -> bool:
            return any((k, loops) in identical for k in later.get(made, ()))

        made = region_module(self.before, matching.sites_before, matching.alias_before,
                             site_key, cut)
        found = None if made is None else (made[0], [(k, loops) for k in made[1]])
        self._regions[key] = found
        return found

    def region_truth(self, key: DynKey, region: Region, perturbed: bool) -> LiteralValue | None:
        """The value at `key` made by its region (`region`) in f64 on the earlier step's
        values it starts from, or on them perturbed as a verdict perturbs a step's inputs
        (made once per key and kind)."""
        from workbench.replay.hlo import evaluate_module
        from workbench.replay.hlo.shadow import widened_module
        from workbench.replay.judge.error_bound import perturb, widen

        if (key, perturbed) in self._region_values:
            return self._region_values[(key, perturbed)]
        module, starts = region
        values = self._start_values(starts)
        if values is None:
            return None
        with evaluation_errors(module.name):
            found = evaluate_module(widened_module(module), perturb(values) if perturbed
                                    else [widen(v) for v in values])
        self._region_values[(key, perturbed)] = found
        return found

    def _start_values(self, starts: Sequence[DynKey]) -> list[LiteralValue] | None:
        """The earlier step's values a region starts from; None when one is not known."""
        values: list[LiteralValue] = []
        for start in starts:
            value = self.before_value(start)
            if value is None:
                return None
            values.append(value)
        return values

    def region_noise(self, key: DynKey, region: Region) -> Noise | None:
        """The value at `key` made by its region with random rounding (`judge/noise/`) on
        the earlier step's values it starts from (made once per key)."""
        from workbench.replay.judge.error_bound import widen
        from workbench.replay.judge.noise.run import noise_of

        if key in self._region_noise:
            return self._region_noise[key]
        module, starts = region
        values = self._start_values(starts)
        if values is None:
            return None
        with evaluation_errors(module.name):
            found = noise_of(module, [widen(v) for v in values])
        self._region_noise[key] = found
        return found

    def evaluate(self, module: HloModule, arguments: Sequence[LiteralValue],
                  sink: Callable[[DynKey, Instruction, Any], None],
                  known: Callable[[DynKey], Any] | None = None) -> LiteralValue | None:
        """Evaluate `module` with `sink` seeing every value (`known` giving the values known
        without computing them, see `Recorder`); None when the sink ended it."""
        from workbench.replay.hlo import evaluate_module
        from workbench.replay.hlo.interpreter import Interpreter

        self.evaluations += 1
        interpreter = self._interpreters.get(id(module))
        if interpreter is None or interpreter.module is not module:
            interpreter = self._interpreters[id(module)] = Interpreter(module)
            with evaluation_errors(module.name):
                self._holds[id(module)] = interpreter.holds_at_once(module.entry.name)
            # The earlier and the later step run in turns, a shadow or a region inside a
            # visit: at most three evaluations are under way at once.
            self.evaluations_hold = sum(sorted(self._holds.values())[-3:])
            self._check_memory()
        with evaluation_errors(module.name):
            try:
                return evaluate_module(module, arguments, Recorder(sink, known), interpreter)
            except Enough:
                return None

    def run(self, before_step: Step, after_step: Step) -> Localization:
        """Localize, with the cyclic collector paused (`gc_paused`): the keys, tuples and
        dicts made per value form no cycles (the localizer's few are collected after the
        pause), and a collection passing over the modules' instructions every few thousand of
        them costs more than the judging."""
        with gc_paused():
            try:
                return self._run(before_step, after_step)
            finally:
                self._let_go()

    def _let_go(self) -> None:
        """Drop the run's values and evaluators (the result keeps what it needs). The
        interpreters' observers and the shadows refer back to the localizer: left in place,
        the values would wait for a collection (the pause puts them in the oldest generation)
        instead of being freed with the localizer."""
        self.before_values.close()
        self.shadows.values.clear()
        self.perturbed.values.clear()
        self._interpreters.clear()
        self._holds.clear()
        self._cones.clear()
        self._regions.clear()
        self._region_values.clear()
        self._region_noise.clear()
        self._shadow_module = None
        self.earlier = None

    def _run(self, before_step: Step, after_step: Step) -> Localization:
        start = time.perf_counter()
        self.evaluations = self.kept = self.peak = self.evaluations_hold = 0
        self._holds.clear()
        self.shadows = Shadows(self, perturbed=False)
        self.perturbed = Shadows(self, perturbed=True)
        search = Search(self)
        alias = self.matching.alias_after
        for key in self.pair.settled():  # bit for bit the earlier step's values, never judged
            made = (alias.get(key, key), ())
            search.identical.add(made)
            search.agrees[made] = True
        earlier = self.earlier = EarlierStep(self)
        try:
            after_result = self.evaluate(self.pair.unsettled(), self.arguments, search.visit,
                                          search.known)
            before_result = earlier.finish() if search.culprit is None else None
        finally:
            earlier.stop()
        matching = self.matching
        result = Localization(before_step, after_step, matched=len(matching.counterpart),
                              unmatched=[s.label for s in matching.unmatched_after],
                              beyond_tolerance=search.judged_by_bound,
                              departing=search.departing)
        result.legal_rewrites = [self._rewrite_text(key) for key in search.legal_rewrites()]
        if search.culprit is None:
            assert before_result is not None and after_result is not None
            result.outputs = self._judge_outputs(before_result, after_result)
            if not result.outputs.ok and search.candidates:
                search.culprit = next(iter(search.candidates.values()))
        if search.culprit is not None:
            self._found(result, *search.culprit)
        else:
            assert result.outputs is not None
            result.explanation = self._explanation(search, result.outputs)
        result.evaluations = self.evaluations
        result.kept_bytes = self.peak
        result.spilled_bytes = self.before_values.spilled_bytes
        result.seconds = time.perf_counter() - start
        return result

    def _judge_outputs(self, before: LiteralValue, after: LiteralValue) -> Comparison:
        """The later step's result against the earlier's, by the verdicts' rule (the bound of
        the earlier step's result)."""
        return compare(before, after, truth=ValueTruth(self, (self.root_before, ())))

    def _explanation(self, search: Search, outputs: Comparison) -> str:
        """Why no single instruction explains the departure (or that there is none)."""
        matching = self.matching
        if outputs.ok:
            text = (f"the later step's result agrees with the earlier step's ({outputs.summary})"
                    ": there is no departure to localize")
            if search.departing:
                text += (f"; {search.departing} intermediate value(s) differ where their "
                         "operands have no counterpart (a rewrite the result absorbs)")
            return text
        if not search.departing:
            root = matching.root_after
            if matching.counterpart.get(root) is None:
                text = ("no matched instruction departs; the departure only shows at the "
                        f"output, whose instruction {matching.sites_after[root].instruction.name}"
                        " has no counterpart before the pass")
            else:
                text = ("no instruction of the later step departs from its counterpart beyond "
                        "the rounding error bound")
        else:
            text = ("no single instruction explains it: every departing value has an operand "
                    "that departs too or has no counterpart (" + "; ".join(search.reasons)
                    + ")")
        unmatched = [s.label for s in matching.unmatched_after]
        if unmatched:
            more = f" and {len(unmatched) - 5} more" if len(unmatched) > 5 else ""
            text += f"; values with no counterpart: {', '.join(unmatched[:5])}{more}"
        if search.missing:
            text += (f"; {search.missing} matched value(s) the earlier step never made (a loop "
                     "ran a different number of times?)")
        return text

    def _rewrite_text(self, key: DynKey) -> str:
        """A legal rewrite in words: `name (opcode) <- name (opcode), matched by ...`."""
        matching = self.matching
        after = matching.sites_after[key[0]].instruction
        before = matching.sites_before[matching.counterpart[key[0]]].instruction
        return (f"{after.name} ({after.opcode}) <- {before.name} ({before.opcode}), matched by "
                f"{matching.matched_by(key[0])}")

    def _found(self, result: Localization, key: DynKey, comparison: Comparison,
               after: LiteralValue, truth: Truth | None, operands: list[DynKey]) -> None:
        matching = self.matching
        before_values = self.before_values
        site = matching.sites_after[key[0]]
        before_key = (matching.counterpart[key[0]], key[1])
        other = matching.sites_before[before_key[0]]
        result.instruction = describe(self.after, site, key[1])
        result.counterpart = describe(self.before, other, key[1])
        self._say_where(result.instruction, site, other)
        result.matched_by = matching.matched_by(key[0])
        result.comparison = comparison
        result.elements = differing_elements(before_values[before_key], after, comparison,
                                             truth)
        result.site, result.counterpart_site, result.culprit_loops = site, other, key[1]
        result.operand_keys = [(matching.counterpart[o[0]], o[1]) for o in operands]
        result.counterpart_operand_keys = [
            (matching.alias_before.get(o, o), key[1]) for o in other.operands]
        kept = (*result.operand_keys, *result.counterpart_operand_keys, before_key)
        result.values = {k: before_values[k] for k in kept if k in before_values}
        result.shapes = {k: matching.sites_before[k[0]].instruction.shape for k in kept}


    def _say_where(self, ref: InstructionRef, site: Site, other: Site) -> None:
        """Add to the culprit's description where inside its called computations it
        changed, and an op_name and source borrowed from the nearest instruction that has
        them when it has none (`inside.py`)."""
        from workbench.replay.localize.inside import change_inside, metadata_source

        change = change_inside(self.after, site.instruction, self.before, other.instruction)
        others = [(f"{other.instruction.name}, its counterpart before the pass", self.before,
                   other.instruction)]
        if change is not None:
            ref.inside = change.text
            others.append((f"{change.instruction.name} in {change.computation}, the changed "
                           f"instruction in its {change.role}", self.after, change.instruction))
        borrowed = metadata_source(self.after, site.computation, site.instruction, others)
        if borrowed is None:
            return
        ref.metadata_from, module, instruction = borrowed
        assert instruction.metadata is not None  # `metadata_source` picks one with an op_name
        ref.op_name = instruction.metadata.op_name
        location = module.source_location(instruction)
        ref.source = f"{location[0]}:{location[1]}" if location else ""


def localize_modules(before: HloModule, after: HloModule, arguments: Sequence[LiteralValue],
                     before_step: Step, after_step: Step,
                     memory_limit: int | None = None) -> Localization:
    """Localize between two loaded modules (no text lines; see `localize_steps`)."""
    return Localizer(before, after, arguments, memory_limit).run(before_step, after_step)


def localize_steps(root: Path, before_step: Step, after_step: Step,
                   arguments: Sequence[LiteralValue],
                   memory_limit: int | None = None) -> Localization:
    """Localize the departure between two HLO steps of a dump, with the instructions' text
    lines and neighbours from the steps' text dumps. Raises `LocalizeError`."""
    from workbench.loader import ReadError, load_step_hlo
    from workbench.replay.localize.text import attach_text

    if before_step.ir != "hlo" or after_step.ir != "hlo":
        raise LocalizeError("these are not HLO steps (MLIR steps: localize_backend_steps)")
    try:
        before, after = load_step_hlo(root, before_step), load_step_hlo(root, after_step)
    except ReadError as error:
        raise LocalizeError(str(error)) from None
    result = localize_modules(before, after, arguments, before_step, after_step, memory_limit)
    attach_text(root, result)
    return result
