"""IREE HAL replay captures: the dumper's JSONL parsed, the live tool, and the index claimer."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from workbench.formats.iree_replay import (
    ReplayDump,
    _with_formats,
    claim_iree_replays,
    parse_replay_jsonl,
    read_replay,
)
from workbench.index import scan
from workbench.loader import ReadError
from workbench.model import Dump

DATA = Path(__file__).parent.parent / "data"
JSONL = DATA / "iree-dump-replay" / "jit_f.jsonl"


@pytest.fixture(scope="module")
def stored() -> ReplayDump:
    return parse_replay_jsonl(JSONL.read_text().splitlines(), "jit_f.ireereplay")


def test_summary(stored: ReplayDump) -> None:
    s = stored.summary
    assert (s.record_count, s.object_count, s.operation_count) == (63, 16, 46)
    assert (s.scope_begin_count, s.scope_end_count) == (3, 3)
    assert s.scopes == ["init", "execute", "deinit"]
    assert s.hermetic and s.strict_replay_supported and not s.environment_referenced
    assert s.version == "2.0" and s.file_length == 14366
    assert s.files["file_object_count"] == 0 and s.files["external_file_count"] == 0
    # Every record row of the dump is a record here, in capture order.
    assert len(stored.records) == s.record_count
    assert [r.ordinal for r in stored.records] == list(range(63))
    assert sum(r.kind == "object" for r in stored.records) == s.object_count
    assert sum(r.kind == "operation" for r in stored.records) == s.operation_count


def test_scopes_of_records(stored: ReplayDump) -> None:
    by_ordinal = {r.ordinal: r for r in stored.records}
    assert by_ordinal[0].scopes == ()  # the session record precedes every scope
    assert by_ordinal[1].operation == "replay.scope_begin" and by_ordinal[1].scopes == ("init",)
    assert by_ordinal[5].operation == "replay.scope_end" and by_ordinal[5].scopes == ("init",)
    assert by_ordinal[6].scopes == ()  # between init and execute
    assert by_ordinal[42].operation == "device.queue_execute"
    assert by_ordinal[42].scopes == ("execute",)
    assert [r.ordinal for r in stored.select(scope="deinit")] == [61, 62]


def test_select(stored: ReplayDump) -> None:
    executes = stored.select(operation="device.queue_execute")
    assert [r.ordinal for r in executes] == [42, 45, 55]
    assert executes[0].payload is not None and executes[0].payload["command_buffer_id"] == 5
    family = stored.select(operation="command_buffer")
    assert family and all(r.operation.startswith("command_buffer.") for r in family)
    assert not stored.select(operation="command_buf")  # a family is a whole name part
    objects = stored.select(kind="object", scope="execute")
    assert objects and all(r.kind == "object" and "execute" in r.scopes for r in objects)
    assert {r.object_type for r in objects} == {"buffer", "semaphore", "command_buffer"}
    assert stored.select(kind="blob") == []


def test_executables_and_details(stored: ReplayDump) -> None:
    (executable,) = stored.executables
    # The id substitution takes: prepare_executable's related object, the executable object.
    assert executable.id == 4 and executable.prepared_at == 11
    assert executable.function_count == 2 and executable.data_length == 5272
    assert executable.format is None  # parsing alone does not open the capture
    dispatch = stored.select(operation="command_buffer.dispatch")[1]
    details = dispatch.details()
    assert "executable_id=4" in details and "workgroup_count=[8,1,1]" in details
    assert "_range" not in details
    assert len(dispatch.details(limit=20)) == 20


@pytest.mark.parametrize(("offset", "expected"), [
    ("1304", "embedded-elf-x86_64"), ("14360", None), ("18446744073709551615", None),
    ("-5", None)])
def test_executable_format_from_its_range(corpus: Path, offset: str, expected: str | None
                                          ) -> None:
    """The format string's range as the dumper printed it, then as a damaged capture may give
    it: past the file's end, past what a file offset holds, negative."""
    lines = [line.replace('"format_range":{"offset":1304,', f'"format_range":{{"offset":{offset},')
             for line in JSONL.read_text().splitlines()]
    dump = parse_replay_jsonl(lines, "jit_f.ireereplay")
    capture = corpus / "iree" / "jit_f" / "jit_f.ireereplay"
    (executable,) = _with_formats(dump.executables, dump.records, capture)
    assert executable.format == expected


@pytest.mark.parametrize(
    ("edit", "reason"),
    [
        (lambda lines: lines[:1] + lines[2:], "has no summary row"),
        (lambda lines: lines[1:], "has no file header row"),
        (lambda lines: [*lines[:5], lines[5][:40]], "line 6 is not JSON"),
        (lambda lines: [*lines, "[1, 2]"], "line 66 is not a JSON object"),
        (lambda lines: [*lines, '{"no_kind": 1}'], "line 66 has no `kind`"),
        (lambda lines: [*lines[:3], lines[3].replace('"sequence_ordinal":1,', "")],
         "line 4: `sequence_ordinal` is missing or not int"),
        (lambda lines: [lines[0], lines[1].replace('"record_count":63', '"record_count":true')],
         "line 2: `record_count` is missing or not int"),
    ],
)
def test_bad_jsonl(edit, reason: str) -> None:
    lines = edit(JSONL.read_text().splitlines())
    with pytest.raises(ReadError, match=f"^x.ireereplay: iree-dump-replay output {reason}"):
        parse_replay_jsonl(lines, "x.ireereplay")


def test_live_dump_agrees_with_stored(corpus: Path, stored: ReplayDump, iree_tools: None) -> None:
    live = read_replay(corpus / "iree" / "jit_f" / "jit_f.ireereplay")
    assert live.summary == stored.summary
    assert [(r.ordinal, r.kind, r.operation, r.scopes) for r in live.records] == [
        (r.ordinal, r.kind, r.operation, r.scopes) for r in stored.records]
    (executable,) = live.executables
    assert executable.id == 4 and executable.format == "embedded-elf-x86_64"


def test_a_capture_named_like_a_flag_is_read_as_a_file(corpus: Path, stored: ReplayDump,
                                                       iree_tools: None, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    capture = tmp_path / "--flagfile=flags.ireereplay"
    capture.write_bytes((corpus / "iree" / "jit_f" / "jit_f.ireereplay").read_bytes())
    monkeypatch.chdir(tmp_path)
    assert read_replay(Path("--flagfile=flags.ireereplay")).summary == stored.summary


def test_live_dump_of_truncated_capture(corpus: Path, iree_tools: None) -> None:
    with pytest.raises(ReadError) as raised:
        read_replay(corpus / "iree" / "jit_f" / "truncated.ireereplay")
    assert raised.value.file.endswith("truncated.ireereplay")
    assert "DATA_LOSS; replay file length extends past file contents" in raised.value.reason


def test_live_dump_of_garbage(tmp_path: Path, iree_tools: None) -> None:
    garbage = tmp_path / "garbage.ireereplay"
    garbage.write_bytes(b"not a replay file at all, just bytes" * 10)
    with pytest.raises(ReadError, match="iree-dump-replay failed with exit status 1: .*magic"):
        read_replay(garbage)


def test_scan_claims_captures_and_vmfb(corpus: Path) -> None:
    dump = scan(corpus / "iree")
    (module,) = dump.modules
    assert (module.id, module.name, module.format) == ("jit_f/jit_f", "jit_f", "iree")
    assert [(e.id, e.file, e.kind) for e in module.executions] == [
        ("jit_f", "jit_f/jit_f.ireereplay", "ireereplay"),
        ("truncated", "jit_f/truncated.ireereplay", "ireereplay")]
    assert [(a.kind, a.file) for a in module.artifacts] == [("vmfb", "jit_f/jit_f.vmfb")]
    assert dump.others == ["jit_f/run.out"] and dump.problems == []


def test_claim_without_or_with_several_vmfbs() -> None:
    dump = Dump(root=Path("."))
    rest = claim_iree_replays(dump, [
        "a/run.ireereplay", "b/x.vmfb", "b/y.vmfb", "b/y.ireereplay", "b/z.ireereplay",
        "c/README", "c/lone.vmfb"])
    modules = {m.id: m for m in dump.modules}
    # No vmfb beside it: the module is the capture's own; several: the one of the same stem.
    assert sorted(modules) == ["a/run", "b/y", "b/z"]
    assert modules["a/run"].artifacts == [] and modules["b/z"].artifacts == []
    assert [a.file for a in modules["b/y"].artifacts] == ["b/y.vmfb"]
    # A vmfb no capture ran stays for other claimers.
    assert rest == ["b/x.vmfb", "c/README", "c/lone.vmfb"]
    assert claim_iree_replays(dump, ["only.txt"]) == ["only.txt"]


def test_ls_json_lists_the_module(corpus: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from workbench.cli import main

    assert main(["ls", str(corpus / "iree" / "jit_f"), "--json"]) == 0
    (module,) = json.loads(capsys.readouterr().out)["modules"]
    assert module["format"] == "iree" and module["name"] == "jit_f"
    assert [e["kind"] for e in module["executions"]] == ["ireereplay", "ireereplay"]
