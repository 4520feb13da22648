"""`workbench diff` and `show --changed` on the corpus: exit status, step specs, output."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from workbench.cli import main

LAYERNORM = "xla/layernorm"


def test_steps_by_xla_number(corpus: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["diff", str(corpus / LAYERNORM), "jit_ln", "0027", "0028", "--json"]) == 1
    payload = json.loads(capsys.readouterr().out)
    assert payload["sections"] == {"changed": 2, "added": 2, "removed": 0, "unchanged": 2}
    assert {s["name"] for s in payload["section_changes"] if s["status"] == "added"} == {
        "%fused_computation", "%fused_computation.1"}


def test_equal_steps_exit_zero(corpus: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["diff", str(corpus / LAYERNORM), "jit_ln", "2", "3"]) == 0
    assert capsys.readouterr().out == ""


def test_renumbering_pair_raw_and_normalized(corpus: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    folder = corpus / "xla/fori_loop"
    (a,) = folder.glob("module_0002.jit_f.0021.*.txt")
    (b,) = folder.glob("module_0002.jit_f.0022.*.txt")
    assert main(["diff", str(a), str(b)]) == 0
    assert main(["diff", "--raw", str(a), str(b)]) == 1
    out = capsys.readouterr().out
    assert out.startswith(f"--- {a}\n+++ {b}\n@@ ")
    assert main(["diff", str(folder), "jit_f", "0021", "0022"]) == 0


def test_ambiguous_pass_name_lists_choices(corpus: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["diff", str(corpus / LAYERNORM), "jit_ln", "algsimp", "fusion"]) == 2
    error = capsys.readouterr().err
    assert "ambiguous" in error and "0006 algsimp" in error and "0013 algsimp" in error


def test_pass_name_and_side_by_side(corpus: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["diff", str(corpus / LAYERNORM), "jit_ln", "fusion", "fusion-wrapper",
                 "-y", "-W", "100", "-U", "0"]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[1].startswith("@@ ") and all(len(line) <= 100 for line in out)


def test_bad_input_exits_two(corpus: Path, tmp_path: Path,
                             capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["diff", str(tmp_path / "missing.txt"), str(tmp_path / "other.txt")]) == 2
    assert main(["diff", str(corpus / LAYERNORM), "jit_ln", "0999", "0028"]) == 2
    assert main(["diff", str(corpus / LAYERNORM), "nosuch", "1", "2"]) == 2
    assert main(["diff", "a", "b", "c"]) == 2
    empty = tmp_path / "empty.txt"
    empty.write_bytes(b"")
    assert main(["diff", str(empty), str(empty)]) == 2
    assert "empty file" in capsys.readouterr().err


def test_show_changed_column(corpus: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["show", str(corpus / LAYERNORM), "jit_ln", "--changed", "--json"]) == 0
    steps = json.loads(capsys.readouterr().out)["steps"]
    by_step = {s["xla_step"]: s["changed"] for s in steps if s["xla_step"] is not None}
    assert by_step[28] is True  # fusion
    assert by_step[1] is False  # pipeline-start of the next pipeline: nothing changed
    assert steps[0]["changed"] is None  # the first step has nothing before it


LOOPS = "mlir/iree-opt-to-loops"


def test_mlir_log_steps_by_name_like_with_like(corpus: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    folder = str(corpus / LOOPS)
    # Step 0 shows the module, CSE the function: the module is cut to the function.
    assert main(["diff", folder, "print-ir-after-change.log", "0", "cse", "--json"]) == 1
    payload = json.loads(capsys.readouterr().out)
    assert payload["a"].startswith("0 ConvertStableHloToIreeInputDialects, builtin.module @jit_f")
    assert payload["b"].startswith("1 CSEPass, func.func @main")
    assert payload["sections"] == {"changed": 1, "added": 0, "removed": 0, "unchanged": 1}
    assert payload["removed_lines"] == 6 and payload["added_lines"] == 3
    # Canonicalize changed nothing: its Before and After dumps are equal.
    assert main(["diff", folder, "print-ir-before-after-module-scope.log", "2", "3"]) == 0
    assert capsys.readouterr().out == ""


def test_what_one_step_did(corpus: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = str(corpus / LOOPS)
    assert main(["diff", folder, "print-ir-before-after-module-scope.log", "5"]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("--- before 5: 4 CSEPass (Before)")
    assert main(["diff", folder, "print-ir-after-change.log", "OneShotBufferizePass"]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("--- before 4: 0 ConvertStableHloToIreeInputDialects") \
        and "+ 3 LinalgElementwiseOpFusionPass" in out[0]
    assert main(["diff", folder, "print-ir-after-change.log", "0"]) == 2
    assert "no IR before it" in capsys.readouterr().err


def test_ir_tree_steps_and_unrelated_scopes(corpus: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    folder = str(corpus / "mlir/iree-compile-jit_f")
    tree = "ir-tree/builtin_module_jit_f"
    # 2: the module, 3: its function after a nested pass that changed nothing. The module
    # dump is cut to the function (and dedented; the function dump's trailing blank line is
    # no change): equal, even as printed.
    assert main(["diff", folder, tree, "2", "3", "--summary"]) == 0
    assert capsys.readouterr().out.startswith("0 changed, 0 added, 0 removed, 2 unchanged")
    assert main(["diff", folder, tree, "2", "3", "--raw"]) == 0
    assert main(["diff", folder, tree, "2", "6", "--summary"]) == 1
    assert capsys.readouterr().out.startswith("1 changed, 0 added, 0 removed, 1 unchanged")
    assert main(["diff", folder, tree, "3", "util.func", "--json"]) == 2
    assert "no step" in capsys.readouterr().err
    steps = json.loads(_run_json(["show", folder, tree, "--json"], capsys))["steps"]
    function = next(s["index"] for s in steps if s["file"].count("/func_func_main/"))
    other = next(s["index"] for s in steps if s["file"].count("/util_func_main/"))
    assert main(["diff", folder, tree, str(function), str(other)]) == 2
    assert "neither holds the other" in capsys.readouterr().err


def _run_json(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    assert main(argv) == 0
    return capsys.readouterr().out


PRODUCERS = Path(__file__).resolve().parents[1] / "data" / "producers"


@pytest.mark.parametrize(("folder", "step"), [("topk_sort_take", "0000"), ("shard_map", "0000")])
def test_a_step_text_and_its_proto_are_the_same_program(
        folder: str, step: str, capsys: pytest.CaptureFixture[str]) -> None:
    """The proto printed as HLO text: the module's config flags (which a proto dump does not
    hold), the source tables and their blank lines, Shardy's mesh replica groups and an
    all-reduce's attribute order read as XLA's text, so the same step diffs equal."""
    (text,) = (PRODUCERS / folder).glob(f"*.{step}.*.txt")
    proto = text.with_name(text.name.removesuffix(".txt") + ".hlo.pb")
    assert main(["diff", str(text), str(proto)]) == 0
    captured = capsys.readouterr()
    assert (captured.out, captured.err) == ("", "")


def test_a_text_step_diffs_against_the_next_proto_step(
        capsys: pytest.CaptureFixture[str]) -> None:
    """topk-decomposer's change, read from text against proto as from text against text."""
    folder = PRODUCERS / "topk_sort_take"
    (before,) = folder.glob("*.0000.*.txt")
    (after,) = folder.glob("*.0001.*.txt")
    proto = after.with_name(after.name.removesuffix(".txt") + ".hlo.pb")
    assert main(["diff", str(before), str(after), "--json"]) == 1
    from_text = json.loads(capsys.readouterr().out)
    assert main(["diff", str(before), str(proto), "--json"]) == 1
    from_proto = json.loads(capsys.readouterr().out)
    changed = {s["name"]: s["status"] for s in from_text["section_changes"]}
    assert changed == {"(module)": "changed", "%main.8": "changed",
                       "%compare-greater-than.1": "added"}
    assert {s["name"]: s["status"] for s in from_proto["section_changes"]} == changed
    assert from_proto["sections"] == from_text["sections"]
