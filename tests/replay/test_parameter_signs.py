"""Fake data draws non-negative the parameters whose sign reaches a square root or logarithm
(`replay/hlo/parameter_signs.py`): an optimizer's second moment, never a norm's input."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.helpers.cli import run_json
from workbench.formats.hlo_text import parse_hlo_text
from workbench.index import scan
from workbench.loader import load_step_hlo
from workbench.replay.backends import open_backend
from workbench.replay.hlo.parameter_signs import non_negative_parameters
from workbench.replay.inputs import InputSpec, fake_inputs
from workbench.replay.steps import ProcessRunner, open_replay

NOISE = Path(__file__).parents[1] / "data" / "noise"


def signs(body: str, parameters: str, extra: str = "") -> frozenset[int]:
    """The parameters found in an entry of `parameters` (text) and `body` (instructions)."""
    text = f"HloModule m\n\n{extra}\nENTRY main {{\n{parameters}\n{body}\n}}\n"
    return non_negative_parameters(parse_hlo_text(text))


TWO = ("  a = f32[4] parameter(0)\n  b = f32[4] parameter(1)\n")


@pytest.mark.parametrize(("body", "expected"), [
    # AdamW's second moment: b2 * v + (1 - b2) * g * g, corrected, under a square root.
    ("  c = f32[4] constant({0.9, 0.9, 0.9, 0.9})\n  cv = f32[4] multiply(c, a)\n"
     "  g2 = f32[4] multiply(b, b)\n  s = f32[4] add(cv, g2)\n  ROOT r = f32[4] sqrt(s)",
     {0}),
    # An RMS norm: the input is squared before the root, so its sign stops there.
    ("  sq = f32[4] multiply(a, a)\n  s = f32[4] add(sq, b)\n  ROOT r = f32[4] rsqrt(s)", {1}),
    # What is taken away flips the sign; the first operand of a difference keeps it.
    ("  d = f32[4] subtract(a, b)\n  ROOT r = f32[4] log(d)", {0}),
    ("  n = f32[4] negate(a)\n  e = f32[4] exponential(b)\n  m = f32[4] multiply(n, e)\n"
     "  ROOT r = f32[4] sqrt(m)", set()),
    # A select's predicate is no value; its two values keep their signs.
    ("  p = pred[4] compare(a, b), direction=LT\n  s = f32[4] select(p, a, b)\n"
     "  ROOT r = f32[4] sqrt(s)", {0, 1}),
    # log-plus-one is defined down to -1, where |N(0, 1)| never goes.
    ("  ROOT r = f32[4] log-plus-one(b)", {1}),
    # A power is undefined below zero only for an exponent that is not an integer.
    ("  h = f32[] constant(0.5)\n  hb = f32[4] broadcast(h), dimensions={}\n"
     "  ROOT r = f32[4] power(a, hb)", {0}),
    ("  t = f32[] constant(2)\n  tb = f32[4] broadcast(t), dimensions={}\n"
     "  ROOT r = f32[4] power(a, tb)", set()),
])
def test_which_signs_reach_a_domain(body: str, expected: set[int]) -> None:
    assert signs(body, TWO) == expected


def test_a_number_a_decay_is_raised_to_is_a_count() -> None:
    """A number whose sign reaches a power's exponent is a step count (an integer in optax,
    a float in PyTorch): marked; an integer's sign reaching a root is not (only floats take
    a root's domain)."""
    parameters = ("  n = s32[] parameter(0)\n  x = f32[] parameter(1)\n"
                  "  k = s32[] parameter(2)\n")
    body = ("  one = s32[] constant(1)\n  n1 = s32[] add(n, one)\n  nf = f32[] convert(n1)\n"
            "  d = f32[] constant(0.9)\n  p = f32[] power(d, nf)\n  q = f32[] power(d, x)\n"
            "  kf = f32[] convert(k)\n  r = f32[] sqrt(kf)\n"
            "  ROOT t = (f32[], f32[], f32[]) tuple(p, q, r)")
    assert signs(body, parameters) == {0, 1}


def test_the_sign_is_followed_through_tuples_calls_and_loops() -> None:
    called = (
        "root_of {\n  x = f32[4] parameter(0)\n  ROOT r = f32[4] sqrt(x)\n}\n\n"
        "body {\n  st = (f32[4], f32[4]) parameter(0)\n"
        "  x0 = f32[4] get-tuple-element(st), index=0\n"
        "  x1 = f32[4] get-tuple-element(st), index=1\n"
        "  ROOT t = (f32[4], f32[4]) tuple(x1, x0)\n}\n\n"
        "cond {\n  st = (f32[4], f32[4]) parameter(0)\n  ROOT k = pred[] constant(false)\n}\n")
    # The loop swaps the state's two arrays each trip: after two trips the first holds `a`
    # again, after one `b`, so both reach the root taken of the first.
    body = ("  t0 = (f32[4], f32[4]) tuple(a, b)\n"
            "  w = (f32[4], f32[4]) while(t0), condition=cond, body=body\n"
            "  w0 = f32[4] get-tuple-element(w), index=0\n"
            "  ROOT c = f32[4] call(w0), to_apply=root_of")
    assert signs(body, TWO, called) == {0, 1}
    # Without the loop, only the tuple's first element reaches the call's root.
    body = ("  t0 = (f32[4], f32[4]) tuple(a, b)\n"
            "  w0 = f32[4] get-tuple-element(t0), index=0\n"
            "  ROOT c = f32[4] call(w0), to_apply=root_of")
    assert signs(body, TWO, called) == {0}


def test_adamw_steps_second_moments_and_count_are_found_in_real_dumps() -> None:
    """In both AdamW dumps, the parameters found are exactly the optimizer state's `nu` and
    its step count (`1 - b2 ** count` divides the second moment under the root)."""
    for name, module_key in (("gpt_adamw_mini", "module_0022"),
                             ("adamw_undefined_truth", "module_0008")):
        root = NOISE / name
        module = next(m for m in scan(root).modules if m.key == module_key)
        backend = open_backend(root, module)
        entry = load_step_hlo(root, backend.steps()[0]).entry
        found = backend.non_negative_parameters()
        state = {p.parameter_number for p in entry.parameters if p.metadata is not None
                 and p.metadata.op_name.startswith(("state[0].nu", "state[0].count"))}
        assert len(state) > 1 and found == state, (name, sorted(found))


def test_fake_data_keeps_every_other_draw() -> None:
    """The non-negative parameters take the magnitudes of the same draws: every other
    parameter's data is what it was, seed for seed."""
    specs = [(np.dtype(np.float32), (64,)), (np.dtype(np.int32), (8,)),
             (np.dtype(np.float32), (32,))]
    plain = fake_inputs(specs, seed=4)
    kept = fake_inputs(specs, seed=4, non_negative=frozenset({0}))
    assert isinstance(kept[0], np.ndarray) and isinstance(plain[0], np.ndarray)
    assert np.array_equal(kept[0], np.abs(plain[0])) and np.any(plain[0] < 0)
    assert np.array_equal(kept[1], plain[1]) and np.array_equal(kept[2], plain[2])


@pytest.mark.parametrize("runner", [None, "process"])
def test_a_replay_on_fake_data_says_so_and_feeds_a_defined_root(runner: str | None) -> None:
    """In this process and where a worker reads the entry (the app's way), the optimizer's
    second moments are drawn non-negative and the inputs say how many."""
    root = NOISE / "gpt_adamw_mini"
    module = next(m for m in scan(root).modules if m.key == "module_0022")
    process = ProcessRunner() if runner else None
    try:
        with open_replay(root, module, spec=InputSpec(fake_data=True), runner=process) as replay:
            arguments = replay.inputs.arguments
            origin = replay.inputs.origin
    finally:
        if process is not None:
            process.close()
    nu = range(27, 40)
    assert all(isinstance(arguments[i], np.ndarray) and np.all(arguments[i] >= 0) for i in nu)
    assert any(isinstance(a, np.ndarray) and np.any(a < 0) for a in arguments[:27])
    assert origin == ("fake data (seed 0; 14 parameters non-negative: their sign reaches a "
                      "root, a logarithm or an exponent)")


def test_the_command_line_tells_the_inputs(capsys: pytest.CaptureFixture[str]) -> None:
    status, payload = run_json(capsys, "replay", NOISE / "gpt_adamw_mini", "module_0022",
                               "--fake-data", "--json")
    assert status == 0, payload
    assert payload["inputs"].startswith("fake data (seed 0; 14 parameters non-negative")
