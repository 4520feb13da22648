"""The `--json` examples of the JSON reference page hold for the commands' real output, and the
page names every key that output has.

Each ```json block of `docs/reference/json.md` is matched against the output of the command it
documents, run here on the same folder. The page abbreviates, so the match reads its notation:

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
PAGE = ROOT / "docs" / "reference" / "json.md"
EXAMPLE = ROOT / "examples" / "layernorm-broken-fusion"
CORPUS = ROOT / "tests" / "data" / "corpus"
ANY = "..."

# The page's section (## heading) holding an example -> the command it documents.
COMMANDS = {
    "`workbench ls --json`": ["ls", str(EXAMPLE), "--json"],
    "`workbench diff --json`": ["diff", str(CORPUS / "xla" / "layernorm"), "jit_ln", "0027",
                                "0028", "--json"],
    "`workbench triage --json`": ["triage", str(EXAMPLE), "--jobs", "0", "--json"],
}


def page_examples() -> dict[str, object]:
    """Section heading -> the JSON example in it, its abbreviations made parseable."""
    examples: dict[str, object] = {}
    heading = ""
    lines = PAGE.read_text(encoding="utf-8").splitlines()
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
    """Why `real` does not match the page's `shown` (None: it matches)."""
    if shown == ANY:
        return None
    if isinstance(shown, dict):
        if not isinstance(real, dict):
            return f"{where}: an object on the page, {type(real).__name__} in the output"
        for key, value in shown.items():
            if key not in real:
                return f"{where}: key {key!r} missing from the output"
            found = mismatch(value, real[key], f"{where}.{key}")
            if found:
                return found
        return None
    if isinstance(shown, list):
        if not isinstance(real, list):
            return f"{where}: a list on the page, {type(real).__name__} in the output"
        if not shown and real:
            return f"{where}: empty on the page, {len(real)} elements in the output"
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
        return f"{where}: {real!r} in the output, {shown!r} on the page"
    return None


def test_every_example_is_checked() -> None:
    assert set(page_examples()) == set(COMMANDS)


@pytest.mark.parametrize("heading", sorted(COMMANDS))
def test_json_example_matches_real_output(
        heading: str, capsys: pytest.CaptureFixture[str]) -> None:
    shown = page_examples()[heading]
    main(COMMANDS[heading])
    real = json.loads(capsys.readouterr().out)
    assert mismatch(shown, real) is None, mismatch(shown, real)


def test_the_matcher_tells_differences() -> None:
    """The matcher fails where the page and the output disagree (so the test above can)."""
    assert mismatch({"a": 1, "b": [{"c": "x..."}]}, {"a": 1, "b": [{"c": "xyz"}], "d": 2}) is None
    assert mismatch({"a": 1}, {"a": 2}) == "$.a: 2 in the output, 1 on the page"
    assert mismatch({"a": 1}, {}) == "$: key 'a' missing from the output"
    assert mismatch({"a": []}, {"a": [1]}) == "$.a: empty on the page, 1 elements in the output"
    assert mismatch({"a": [{"f": "..."}]}, {"a": []}) is None
    assert mismatch({"a": [{"f": "x"}]}, {"a": []}) is not None
    assert mismatch({"a": ["x..."]}, {"a": ["y", "z"]}) is not None
    assert mismatch({"s": 0.39}, {"s": 1.5}) is None
    assert mismatch({"s": 0.39}, {"s": "1.5"}) is not None
    assert mismatch({"n": 1}, {"n": True}) is not None


def keys_of(value: object) -> set[str]:
    """Every object key anywhere in a JSON value."""
    if isinstance(value, dict):
        return set(value) | {k for item in value.values() for k in keys_of(item)}
    if isinstance(value, list):
        return {k for item in value for k in keys_of(item)}
    return set()


def undocumented(real: object, page: str) -> list[str]:
    """Keys of `real` the page names neither as `key` nor as "key"."""
    return sorted(k for k in keys_of(real) if f"`{k}`" not in page and f'"{k}"' not in page)


@pytest.mark.parametrize("heading", sorted(COMMANDS))
def test_the_page_names_every_key_of_the_output(
        heading: str, capsys: pytest.CaptureFixture[str]) -> None:
    main(COMMANDS[heading])
    real = json.loads(capsys.readouterr().out)
    assert undocumented(real, PAGE.read_text(encoding="utf-8")) == []


def test_a_new_key_is_caught() -> None:
    assert undocumented({"results": [{"brand_new_key": 1}]}, "`results`") == ["brand_new_key"]
