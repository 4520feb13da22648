"""Recordings of a program's compiled calls, for runs where XLA writes no snapshot (torch_xla's
CPU client, XLA GPU, XLA CPU past protobuf's 2 GB): their names, and which module each ran.

A recording folder holds `inputs/NAME.argK.npy` and `outputs/NAME.outK.npy` (K in the order of
the entry computation's parameters and results) and, when `workbench.record` wrote it,
`recording.json`:

    {"format": "workbench-recording", "version": 1, "producer": "jax 0.12.0",
     "calls": [{"name": "jit_f.0", "module": "jit_f", "fingerprint": "sha256:...",
                "layout": "(f32[4,8]{1,0})->f32[4]{0}", "arguments": 1, "results": 1}],
     "skipped": [{"module": "jit_f", "reason": "..."}]}

`module` is the HLO module's name, `fingerprint` the SHA-256 of the optimized HLO text the
executable ran (what XLA dumps as `*after_optimizations.txt`), `layout` its entry computation
layout: with them a call finds its module without the user naming it, among several modules
of one name too. `skipped` says which calls were not recorded and why (too large, too many).
A folder without `recording.json` (recorded by hand, as the XLA GPU corpus was) names module
`jit_NAME` by its files alone.

A dump folder's recordings are found by name (`claim_recordings`): any folder under it with
`inputs/NAME.argK.npy` files whose calls match its modules, `io/` by convention.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from workbench.model import Dump, Execution, Module, Problem, Source
from workbench.sources import ReadError, open_file, read_bytes

KIND = "recorded-npy"
MANIFEST = "recording.json"
FORMAT = "workbench-recording"
VERSION = 1
ID_PREFIX = "recorded "
MANIFEST_LIMIT = 16 << 20  # a manifest lists calls, a few hundred bytes each
_FILE = re.compile(r"(?P<name>.+)\.(?P<role>arg|out)(?P<k>\d+)\.npy")
_IN_FOLDER = re.compile(r"(?:(?P<folder>.*)/)?(?P<sub>inputs|outputs)/(?P<file>[^/]+\.npy)")
_LAYOUT = re.compile(rb"entry_computation_layout=\{(.*?)\}(?:, [a-z_]+=|$)")


@dataclass(frozen=True)
class RecordedCall:
    """One recorded call: its files' NAME, and what the module it ran is known by."""

    name: str
    module: str
    fingerprint: str | None = None
    layout: str | None = None


@dataclass
class Recording:
    """A recording folder (relative to the dump's root, or absolute) and its calls."""

    folder: str
    calls: list[RecordedCall] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # why calls were left out, as written


def execution_of(recording: Recording, call: RecordedCall) -> Execution:
    """The model's execution of a call: its file is the call's first argument."""
    prefix = f"{recording.folder}/" if recording.folder else ""
    return Execution(f"{ID_PREFIX}{call.name}", f"{prefix}inputs/{call.name}.arg0.npy", KIND)


def call_files(arg0: Path, role: str) -> Iterator[Path]:
    """A call's argument (`arg`) or result (`out`) files, from its first argument's path, in
    order, up to the first missing one."""
    name = arg0.name.removesuffix(".arg0.npy")
    folder = arg0.parent.parent / ("inputs" if role == "arg" else "outputs")
    number = 0
    while (path := folder / f"{name}.{role}{number}.npy").is_file():
        yield path
        number += 1


def read_recording(root: Path, folder: str, names: list[str]) -> Recording:
    """The recording in `folder` (relative to `root`, or absolute): from its `recording.json`
    when `names` (the folder's files, relative to it) has one, else from the `inputs/` names.
    Raises ReadError naming the manifest and the reason."""
    recording = Recording(folder)
    if MANIFEST in names:
        manifest = f"{folder}/{MANIFEST}" if folder else MANIFEST
        data = read_bytes(root, Source(manifest))
        if len(data) > MANIFEST_LIMIT:
            raise ReadError(manifest, f"larger than {MANIFEST_LIMIT >> 20} MB")
        try:
            document = json.loads(data)
            if document.get("format") != FORMAT or document.get("version") != VERSION:
                raise ReadError(manifest, f"not a {FORMAT} version {VERSION} manifest")
            for entry in document["calls"]:
                recording.calls.append(RecordedCall(
                    str(entry["name"]), str(entry["module"]), entry.get("fingerprint"),
                    entry.get("layout")))
            recording.skipped = [f"{s.get('module', '?')}: {s.get('reason', '?')}"
                                 for s in document.get("skipped", [])]
        except (ValueError, KeyError, TypeError, AttributeError) as error:
            raise ReadError(manifest, f"not a recording manifest ({error!r})") from None
        return recording
    inputs = [name.removeprefix("inputs/") for name in names if name.startswith("inputs/")]
    calls = sorted({m["name"] for name in inputs
                    if (m := _FILE.fullmatch(name)) and m["role"] == "arg"})
    recording.calls = [RecordedCall(name, f"jit_{name}") for name in calls]
    return recording


def recording_folders(paths: list[str]) -> dict[str, list[str]]:
    """Folders (relative) that hold `inputs/*.npy`, each with its files relative to it."""
    found: dict[str, list[str]] = {}
    for path in paths:
        match = _IN_FOLDER.fullmatch(path)
        if match is not None:
            found.setdefault(match["folder"] or "", []).append(f"{match['sub']}/{match['file']}")
    for path in paths:
        folder, _, name = path.rpartition("/")
        if name == MANIFEST and folder in found:
            found[folder].append(MANIFEST)
    return {folder: names for folder, names in found.items()
            if any(name.startswith("inputs/") for name in names)}


def matching_modules(root: Path, modules: list[Module], call: RecordedCall) -> list[Module]:
    """The modules that ran `call`: by name; among several of one name, the one whose
    optimized text has the call's fingerprint, else its entry layout."""
    named = [module for module in modules if module.name == call.module]
    if len(named) < 2:
        return named
    if call.fingerprint is not None:
        same = [m for m in named if _optimized_fingerprint(root, m) == call.fingerprint]
        if same:
            return same
    if call.layout is not None:
        same = [m for m in named if _optimized_layout(root, m) == call.layout]
        if same:
            return same
    return named


def entry_layout(hlo_text_header: bytes) -> str | None:
    """The `entry_computation_layout` of an `HloModule` header line."""
    match = _LAYOUT.search(hlo_text_header.partition(b"\n")[0])
    return match[1].decode("utf-8", "replace") if match else None


def parameter_count(layout: str | None) -> int | None:
    """How many parameters an entry layout `(f32[4]{0}, (s32[], f32[2]{0}))->...` lists
    (None when it is no such layout)."""
    if layout is None or not layout.startswith("("):
        return None
    depth, count, empty = 0, 1, True
    for char in re.sub(r"/\*.*?\*/", "", layout)[1:]:  # `/*index=5*/` every fifth
        if char in "([{":
            depth += 1
        elif char in ")]}":
            if depth == 0:
                return 0 if empty else count
            depth -= 1
        elif char == "," and depth == 0:
            count += 1
        if not char.isspace():
            empty = False
    return None


def _optimized_text(module: Module) -> str | None:
    step = next((s for s in module.steps if s.kind == "after" and s.text is not None
                 and s.text.file.endswith(".txt")), None)
    return step.text.file if step is not None and step.text is not None else None


def _optimized_fingerprint(root: Path, module: Module) -> str | None:
    file = _optimized_text(module)
    if file is None:
        return None
    try:
        return "sha256:" + hashlib.sha256(read_bytes(root, Source(file))).hexdigest()
    except ReadError:
        return None


def _optimized_layout(root: Path, module: Module) -> str | None:
    file = _optimized_text(module)
    if file is None:
        return None
    try:
        with open_file(root / file) as handle:
            return entry_layout(handle.read(64 * 1024))
    except OSError:
        return None


def attach_recording(dump: Dump, recording: Recording) -> tuple[int, list[RecordedCall]]:
    """Give each call's module its execution (once); how many modules got one, and the calls
    that match no module."""
    attached = 0
    unmatched = []
    for call in recording.calls:
        modules = matching_modules(dump.root, dump.modules, call)
        if not modules:
            unmatched.append(call)
        execution = execution_of(recording, call)
        for module in modules:
            if execution not in module.executions:
                module.executions.append(execution)
            attached += 1
    return attached, unmatched


def claim_recordings(dump: Dump, paths: list[str]) -> list[str]:
    """Attach the recordings found among `paths` to the dump's modules; the paths left.

    A folder with a manifest is claimed whole, its calls that match no module each a problem;
    one without (hand-made `.npy` files) only when one of its names fits a module.
    """
    folders = recording_folders(paths)
    claimed: set[str] = set()
    for folder, names in sorted(folders.items()):
        manifest = f"{folder}/{MANIFEST}" if folder else MANIFEST
        try:
            recording = read_recording(dump.root, folder, names)
        except ReadError as error:
            dump.problems.append(Problem(error.file, error.reason))
            continue
        attached, unmatched = attach_recording(dump, recording)
        if MANIFEST not in names and not attached:
            continue
        for call in unmatched:
            dump.problems.append(Problem(manifest, f"recorded call {call.name} ran module "
                                         f"{call.module}, which this dump does not have"))
        prefix = f"{folder}/" if folder else ""
        claimed.update(f"{prefix}{name}" for name in names)
    return [path for path in paths if path not in claimed] if claimed else paths


def no_execution_note(module: Module) -> str:
    """What to do for a module with neither a snapshot nor a recording."""
    if module.format != "xla":
        return "no execution to replay: use --fake-data for seeded random inputs"
    return ("no snapshot and no recording to replay: use --fake-data for seeded random inputs, "
            "or record the program's calls (workbench.record.jax / workbench.record.torch_xla "
            "write a recording the dump's io/ folder keeps)")
