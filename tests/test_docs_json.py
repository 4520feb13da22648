"""The README's `--json` examples hold for the commands' real output.

Each ```json block of the README is matched against the output of the command it documents,
run here on the same folder. The README abbreviates, so the match reads its notation:

- `...` alone (also `{...}`) stands for any value; a string with `...` inside stands for any
  text there (`"module_0010.jit_ln.0027....txt"`);
- `, ...]` ends a list that goes on: every element shown must match some element of the real
  list (an element of placeholders only, `{"file": "...", "reason": "..."}`, shows the shape
  of the elements there may be, and also holds for an empty list); a list shown empty must be
  empty;
- an object shows some of the keys: each must be there and match;
- floats are timings that vary from run to run: only their type is checked; every other
  value (ints, booleans, null, text) must be equal.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from workbench.cli import main

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
EXAMPLE = ROOT / "examples" / "layernorm-broken-fusion"
CORPUS = ROOT / "tests" / "data" / "corpus"
ANY = "..."

# The README section (### heading) holding an example -> the command it documents.
COMMANDS = {
    "`workbench ls --json`": ["ls", str(EXAMPLE), "--json"],
    "IR diff": ["diff", str(CORPUS / "xla" / "layernorm"), "jit_ln", "0027", "0028", "--json"],
    "Replay, bisect, triage": ["triage", str(EXAMPLE), "--jobs", "0", "--json"],
}


def readme_examples() -> dict[str, object]:
    """Section heading -> the JSON example in it, its abbreviations made parseable."""
    examples: dict[str, object] = {}
    heading = ""
    lines = README.read_text(encoding="utf-8").splitlines()
    index = 0
    while index < len(lines):
        line = lines[index]
        if line.startswith("#"):
            heading = line.lstrip("#").strip()
        if line.strip() == "```json":
            end = lines.index("```", index + 1)
            text = "\n".join(lines[index + 1:end])
            text = re.sub(r",\s*\.\.\.\s*\]", "]", text).replace("{...}", '"..."')
            assert heading not in examples, f"two JSON examples under {heading!r}"
            examples[heading] = json.loads(text)
            index = end
        index += 1
    return examples


def placeholders_only(shown: object) -> bool:
    if isinstance(shown, dict):
        return all(placeholders_only(value) for value in shown.values())
    if isinstance(shown, list):
        return all(placeholders_only(value) for value in shown)
    return shown == ANY


def mismatch(shown: object, real: object, where: str = "$") -> str | None:
    """Why `real` does not match the README's `shown` (None: it matches)."""
    if shown == ANY:
        return None
    if isinstance(shown, dict):
        if not isinstance(real, dict):
            return f"{where}: an object in the README, {type(real).__name__} in the output"
        for key, value in shown.items():
            if key not in real:
                return f"{where}: key {key!r} missing from the output"
            found = mismatch(value, real[key], f"{where}.{key}")
            if found:
                return found
        return None
    if isinstance(shown, list):
        if not isinstance(real, list):
            return f"{where}: a list in the README, {type(real).__name__} in the output"
        if not shown and real:
            return f"{where}: empty in the README, {len(real)} elements in the output"
        for number, item in enumerate(shown):
            if not real and placeholders_only(item):
                continue
            reasons = [mismatch(item, element, f"{where}[{number}]") for element in real]
            if all(reasons):
                return reasons[0] if len(reasons) == 1 else (
                    f"{where}[{number}]: no element of the output matches {item!r}")
        return None
    if isinstance(shown, str) and ANY in shown:
        pattern = ".*".join(re.escape(part) for part in shown.split(ANY))
        if isinstance(real, str) and re.fullmatch(pattern, real, re.DOTALL):
            return None
        return f"{where}: {real!r} is not {shown!r}"
    if isinstance(shown, float):
        return None if isinstance(real, float) else f"{where}: {real!r} is not a number"
    if shown != real or type(shown) is not type(real):
        return f"{where}: {real!r} in the output, {shown!r} in the README"
    return None


def test_every_readme_example_is_checked() -> None:
    assert set(readme_examples()) == set(COMMANDS)


@pytest.mark.parametrize("heading", sorted(COMMANDS))
def test_readme_json_example_matches_real_output(
        heading: str, capsys: pytest.CaptureFixture[str]) -> None:
    shown = readme_examples()[heading]
    main(COMMANDS[heading])
    real = json.loads(capsys.readouterr().out)
    assert mismatch(shown, real) is None, mismatch(shown, real)


def test_the_matcher_tells_differences() -> None:
    """The matcher fails where the README and the output disagree (so the test above can)."""
    assert mismatch({"a": 1, "b": [{"c": "x..."}]}, {"a": 1, "b": [{"c": "xyz"}], "d": 2}) is None
    assert mismatch({"a": 1}, {"a": 2}) == "$.a: 2 in the output, 1 in the README"
    assert mismatch({"a": 1}, {}) == "$: key 'a' missing from the output"
    assert mismatch({"a": []}, {"a": [1]}) == "$.a: empty in the README, 1 elements in the output"
    assert mismatch({"a": [{"f": "..."}]}, {"a": []}) is None
    assert mismatch({"a": [{"f": "x"}]}, {"a": []}) is not None
    assert mismatch({"a": ["x..."]}, {"a": ["y", "z"]}) is not None
    assert mismatch({"s": 0.39}, {"s": 1.5}) is None
    assert mismatch({"s": 0.39}, {"s": "1.5"}) is not None
    assert mismatch({"n": 1}, {"n": True}) is not None
