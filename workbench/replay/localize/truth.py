"""The truth of a value for the verdicts' rule: its region's or the step's f64 shadow, on
perturbed inputs too, widened by the region's rounding noise (see `localizer.py`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from workbench.hlo_ir import Instruction
from workbench.replay.judge.compare import NOISE, Stage, Truth
from workbench.replay.localize.recorder import Enough
from workbench.replay.localize.regions import entry_name
from workbench.replay.localize.result import DynKey, LocalizeError, NotJudged, Region

if TYPE_CHECKING:
    from workbench.replay.localize.context import LocalizeContext

def stage_truth(strict: Callable[[], Any], shadow: Callable[[], Any], moved: Callable[[], Any],
                conditioning: bool) -> tuple[Truth | None, str | None]:
    """One stage of a value's truth for the verdicts' rule: the f64 value and its bound (with
    `conditioning`, from the evaluation on perturbed inputs too), or why there is none."""
    from workbench.replay.judge.error_bound import truth_of

    try:
        truth = shadow()
        perturbed = moved() if conditioning else truth
    except LocalizeError as error:
        return None, f"no f64 evaluation: {error}"
    if truth is None or perturbed is None:
        return None, "the f64 evaluation made no such value"
    try:
        return truth_of(strict(), truth, perturbed), None
    except ValueError as error:
        return None, str(error)


class Shadows:
    """The earlier step's values in f64 (one `kind`: on the inputs, or on perturbed ones), the
    truth of values with no region (see the module's docstring).

    The first evaluation runs only the entry instructions the value asked for depends on (its
    cone; `cone_module`) and stops once it has made it, keeping every matched value it made
    on the way; a value it did not make costs a second evaluation of the whole step, which
    runs to the end. So a culprit costs the shadows of what it depends on, and no kind costs
    more than two evaluations."""

    def __init__(self, localizer: LocalizeContext, perturbed: bool) -> None:
        self.localizer = localizer
        self.perturbed = perturbed
        self.values: dict[DynKey, Any] = {}
        self.runs = 0
        self.complete = False

    def get(self, key: DynKey, also: set[DynKey] | None = None) -> Any:
        """The value at `key` (an earlier-step key), or None when the shadow made none; an
        evaluation it needs runs until it has made `also` too. Raises `LocalizeError` when
        the shadow cannot be evaluated."""
        from workbench.replay.judge.error_bound import perturb, widen

        if key in self.values or self.complete:
            return self.values.get(key)
        localizer = self.localizer
        wanted = localizer.wanted
        whole = self.runs >= 1
        missing = {key, *(also or ())} - set(self.values)
        asked = set(missing)

        def sink(made: DynKey, instruction: Instruction, value: Any) -> None:
            if made[0] in wanted and made not in self.values:
                self.values[made] = value if isinstance(value, tuple) else np.asarray(value)
                localizer.keep(self.values[made])
                missing.discard(made)
                if not missing and not whole:
                    raise Enough()

        arguments = (perturb(localizer.arguments) if self.perturbed
                     else [widen(a) for a in localizer.arguments])
        module = localizer.shadow_module()
        if not whole:
            module = localizer.cone(module, frozenset(entry_name(k) for k in asked))
        self.runs += 1
        ended = localizer.evaluate(module, arguments, sink) is not None
        if whole:
            self.complete = ended
        elif ended:  # the cone ran to its end: what it did not make, the step never makes
            self.values.update(dict.fromkeys(missing))
        return self.values.get(key)


@dataclass
class ValueTruth:
    """The truth of one value in the stages verdicts use (a `compare.TruthSource`): its
    region's (or the step's) f64 value first, on perturbed inputs too only when the first
    bound is not enough."""

    localizer: LocalizeContext
    key: DynKey  # the earlier step's value
    also: set[DynKey] = field(default_factory=set)  # made in the same evaluation if needed
    identical: set[DynKey] | None = None  # later-step values bit for bit the earlier's: a
    # value's region starts there (`Localizer.region_truth`); None: the whole step's shadow
    problem: str | None = None
    last: Truth | None = None  # the truth of the last stage asked for

    def stages(self) -> tuple[Stage, ...]:
        """The verdicts' stages; the noise stage where the value has a region (its rounding
        noise is then modelled from values both steps made alike, see `judge/noise/`)."""
        return (False, True) if self.identical is None else (False, True, NOISE)

    def truth(self, conditioning: Stage) -> Truth | None:
        localizer, key = self.localizer, self.key
        region = (localizer.region(key, self.identical) if self.identical is not None
                  else None)
        if isinstance(conditioning, str):  # NOISE, the one stage that is not a bool
            return self._noisy(region)
        if region is not None:
            shadow = lambda: localizer.region_truth(key, region, perturbed=False)  # noqa: E731
            moved = lambda: localizer.region_truth(key, region, perturbed=True)  # noqa: E731
        else:
            shadow = lambda: localizer.shadows.get(key, self.also)  # noqa: E731
            moved = lambda: localizer.perturbed.get(key, self.also)  # noqa: E731
        truth, problem = stage_truth(lambda: localizer.before_value(key), shadow, moved,
                                     conditioning)
        if truth is None:
            self.problem = problem
            return None
        self.last = truth
        return truth

    def _noisy(self, region: Region | None) -> Truth | None:
        """The conditioning stage's truth widened by the region's rounding noise."""
        from workbench.replay.judge.error_bound import with_noise

        if region is None:
            self.problem = "no region to model the rounding noise in"
            return None
        base = self.truth(True)
        if base is None:
            return None
        try:
            noise = self.localizer.region_noise(self.key, region)
        except LocalizeError as error:
            self.problem = f"no random-rounding evaluation: {error}"
            return None
        if noise is None:
            self.problem = "the random-rounding evaluation made no such value"
            return None
        strict = self.localizer.before_value(self.key)
        if strict is None:
            self.problem = "the earlier step made no such value"
            return None
        try:
            self.last = with_noise(base, noise, strict)
        except ValueError as error:
            self.problem = str(error)
            return None
        return self.last


@contextmanager
def evaluation_errors(what: str) -> Iterator[None]:
    """An evaluation's errors as `LocalizeError`s."""
    from workbench.replay.errors import EvaluationError, Unsupported

    try:
        yield
    except Unsupported as error:
        raise NotJudged(f"unsupported: {error.what}") from None
    except EvaluationError as error:
        raise NotJudged(f"cannot evaluate {what}: {error}") from None
