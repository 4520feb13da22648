"""MLIR action logs (`--log-actions-to=FILE`): the tree of actions a compile ran.

Each action prints a begin line and, when it ran, a completion line (MLIR's
`Debug/Observers/ActionLogging.cpp`, `Debug/ExecutionContext.cpp`):

    [thread <name>] begins (no breakpoint) Action <printed action> (<IR units>)`
    [thread <name>] skipping (on breakpoint: <breakpoint>) Action <printed action>`
    [thread <name>] completed `<tag>`

The breakpoint part appears when breakpoints are printed; a skipped action has no
completion. The printed action depends on its kind: `` `pass-execution` running `<Pass>` on
Operation `<op>` `` (older MLIR: `running "<Pass>" on Operation "<op>"`), `` `apply-pattern
pattern: <name> ``, `GreedyPatternRewriteIteration(<n>)`, `apply-conversion`, or `Action
"<tag>"` by default. The IR units are the operations the action works on, printed with their
regions elided (`{...}`); they may span several lines. Actions nest per thread: a pass contains
its pattern applications. A log cut short leaves begins without completion: they are kept
(open) and reported, never fatal.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from pathlib import Path

from workbench.formats.mlir_text import operation_of_line, scope_label
from workbench.model import Module, Problem, Source, Step
from workbench.sources import decode_text, read_bytes

_LINE_RE = re.compile(r"^\[thread (?P<thread>[^\]\n]*)\] (?P<event>begins|skipping|completed) ",
                      re.MULTILINE)
_BREAKPOINT_RE = re.compile(r"\((?:no breakpoint|on breakpoint: (?P<bp>.*?))\) (?=Action )")
_PASS_RE = re.compile(r"`(?P<tag>pass-execution)` running [`\"](?P<pass>[^`\"]*)[`\"] on "
                      r"Operation [`\"](?P<op>[^`\"]*)[`\"]")
_PATTERN_RE = re.compile(
    r"`(?P<tag>apply-pattern) pattern: (?P<pattern>(?:\(anonymous namespace\)|"
    r"<[^<>\n]*(?:<[^<>\n]*>[^<>\n]*)*>|[^\s(<])*)"
)
_ITERATION_RE = re.compile(r"(?P<tag>GreedyPatternRewriteIteration)\((?P<n>\d+)\)")
_DEFAULT_RE = re.compile(r'Action "(?P<tag>[^"]*)"')
_COMPLETED_RE = re.compile(r"`(?P<tag>[^`]*)`")
_LOC_RE = re.compile(r'loc\("(?P<file>(?:[^"\\]|\\.)*)":(?P<line>\d+):(?P<col>\d+)')


@dataclass(slots=True, eq=False)
class Action:
    """One action. `begin`/`end` are positions in the log's sequence of begin, skip and
    completion lines (the log's only clock); `end` is None while the action is open."""

    index: int
    thread: str
    tag: str
    printed: str  # the action as printed (before its IR units)
    units: str  # the IR units' text, "" when not printed
    breakpoint: str | None  # None: not printed, "" no breakpoint, else the breakpoint hit
    skipped: bool
    begin: int
    line: int  # 1-based line of the begin line
    end: int | None = None
    end_line: int | None = None
    parent: Action | None = field(default=None, repr=False)
    depth: int = 0
    children: list[Action] = field(default_factory=list, repr=False)
    pass_name: str | None = None  # pass-execution: the pass
    operation: str | None = None  # pass-execution: the op name it ran on
    pattern: str | None = None  # apply-pattern: the pattern's name

    @property
    def completed(self) -> bool:
        return self.end is not None

    @property
    def target(self) -> str | None:
        """The operation a pass ran on, as the model labels it (`func.func @main`)."""
        if self.operation is None:
            return None
        found = operation_of_line(self.units.split("\n", 1)[0]) if self.units else None
        if found is None or found[0] != self.operation:
            return self.operation
        return scope_label(*found)

    @property
    def locations(self) -> list[tuple[str, int, int]]:
        """file:line:col locations the IR units carry (printed with debug info)."""
        return [(m["file"], int(m["line"]), int(m["col"])) for m in _LOC_RE.finditer(self.units)]

    def backtrace(self) -> list[Action]:
        """This action and its enclosing actions, innermost first."""
        chain: list[Action] = []
        current: Action | None = self
        while current is not None:
            chain.append(current)
            current = current.parent
        return chain

    def pass_run(self) -> Action | None:
        """The pass execution this action belongs to (itself when it is one)."""
        for action in self.backtrace():
            if action.tag == "pass-execution":
                return action
        return None

    def walk(self) -> Iterator[Action]:
        """This action and everything it contains, in begin order."""
        stack = [self]
        while stack:
            action = stack.pop()
            yield action
            stack.extend(reversed(action.children))


@dataclass
class ActionLog:
    file: str
    actions: list[Action] = field(default_factory=list)  # in begin order
    roots: list[Action] = field(default_factory=list)
    events: int = 0  # begin, skip and completion lines read
    problems: list[Problem] = field(default_factory=list)

    @property
    def open_actions(self) -> list[Action]:
        return [a for a in self.actions if a.end is None and not a.skipped]

    def tags(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for action in self.actions:
            counts[action.tag] = counts.get(action.tag, 0) + 1
        return counts


def _describe(body: str) -> tuple[str, str, str, str | None, str | None, str | None]:
    """(tag, printed, units, pass, operation, pattern) from what follows `Action `."""
    if body.endswith("`"):
        body = body[:-1]
    if match := _PASS_RE.match(body):
        return ("pass-execution", body[: match.end()], _units(body, match.end()),
                match["pass"], match["op"], None)
    if match := _PATTERN_RE.match(body):
        return ("apply-pattern", body[: match.end()], _units(body, match.end()), None, None,
                match["pattern"])
    if match := _ITERATION_RE.match(body):
        return (match["tag"], body[: match.end()], _units(body, match.end()), None, None, None)
    if match := _DEFAULT_RE.match(body):
        return (match["tag"], body[: match.end()], _units(body, match.end()), None, None, None)
    split = body.find(" (")
    printed = body if split < 0 else body[:split]
    tag = printed.split(" ", 1)[0].strip('`"')
    return (tag, printed, _units(body, split) if split >= 0 else "", None, None, None)


def _units(body: str, at: int) -> str:
    rest = body[at:]
    if rest.startswith(" (") and rest.endswith(")"):
        return rest[2:-1]
    return rest.strip()


def parse_action_log(text: str, file: str) -> ActionLog:
    """Build the action tree of a log; bad or cut lines become problems."""
    log = ActionLog(file)
    stacks: dict[str, list[Action]] = {}
    matches = list(_LINE_RE.finditer(text))
    line = 1
    previous = 0
    unmatched = 0
    for number, match in enumerate(matches):
        start = match.start()
        line += text.count("\n", previous, start)
        previous = start
        stop = matches[number + 1].start() if number + 1 < len(matches) else len(text)
        thread, event = match["thread"], match["event"]
        rest = text[match.end() : stop].rstrip("\r\n")  # a log saved with CRLF line ends too
        stack = stacks.setdefault(thread, [])
        if event == "completed":
            tag_match = _COMPLETED_RE.match(rest)
            tag = tag_match["tag"] if tag_match else rest.strip()
            _complete(log, stack, tag, number, line)
            continue
        breakpoint = None
        bp = _BREAKPOINT_RE.match(rest)
        if bp is not None:
            breakpoint = bp["bp"] or ""
            rest = rest[bp.end() :]
        if not rest.startswith("Action "):
            unmatched += 1
            continue
        tag, printed, units, pass_name, operation, pattern = _describe(rest[len("Action ") :])
        parent = stack[-1] if stack else None
        action = Action(len(log.actions), thread, tag, printed, units, breakpoint,
                        event == "skipping", number, line, parent=parent,
                        depth=parent.depth + 1 if parent else 0, pass_name=pass_name,
                        operation=operation, pattern=pattern)
        log.actions.append(action)
        (parent.children if parent else log.roots).append(action)
        if event == "begins":
            stack.append(action)
    log.events = len(matches)
    if unmatched:
        log.problems.append(Problem(file, f"{unmatched} begin lines without `Action`"))
    still_open = [a for stack in stacks.values() for a in stack]
    if still_open:
        first = min(still_open, key=lambda a: a.index)
        log.problems.append(Problem(file, (
            f"{len(still_open)} actions never completed (log cut short?); the first began "
            f"at line {first.line}: {first.printed[:80]}")))
    if not log.actions and text.strip():
        log.problems.append(Problem(file, "no action line found (not an action log?)"))
    return log


def _complete(log: ActionLog, stack: list[Action], tag: str, number: int, line: int) -> None:
    for depth in range(len(stack) - 1, -1, -1):
        if stack[depth].tag == tag:
            for skipped in stack[depth + 1 :]:
                log.problems.append(Problem(log.file, (
                    f"action `{skipped.tag}` begun at line {skipped.line} closed by the "
                    f"completion of its parent at line {line}")))
            action = stack[depth]
            action.end, action.end_line = number, line
            del stack[depth:]
            return
    log.problems.append(Problem(log.file, f"completion of `{tag}` at line {line} matches no "
                                          "open action"))


def read_action_log(data: bytes, file: str) -> ActionLog:
    """Decode (strict UTF-8, else `ReadError`) and parse an action log."""
    return parse_action_log(decode_text(data, file), file)


# --- filters, and the steps actions belong to ----------------------------------------------

def _matches_location(action: Action, query: tuple[str, int | None, int | None]) -> bool:
    file, line, col = query
    for loc_file, loc_line, loc_col in action.locations:
        if not (loc_file == file or loc_file.endswith("/" + file)):
            continue
        if line is not None and loc_line != line:
            continue
        if col is not None and loc_col != col:
            continue
        return True
    return False


def parse_location(text: str) -> tuple[str, int | None, int | None]:
    """`file[:line[:col]]` -> (file, line, col); raises ValueError when numbers are not."""
    parts = text.rsplit(":", 2)
    numbers: list[int] = []
    while len(parts) > 1 and parts[-1].isdigit() and len(numbers) < 2:
        numbers.insert(0, int(parts.pop()))
    file = ":".join(parts)
    if not file:
        raise ValueError(f"no file name in location {text!r}")
    line = numbers[0] if numbers else None
    col = numbers[1] if len(numbers) > 1 else None
    return file, line, col


def filter_actions(actions: Iterable[Action], *, tag: str | None = None,
                   pass_name: str | None = None, location: str | None = None) -> list[Action]:
    """Actions matching every filter given. `tag` and `pass_name` are shell patterns
    (`apply-*`, `*Canonicalizer*`); an action matches `pass_name` when it or an enclosing
    action is an execution of that pass (a pass's nested pipelines belong to it too).
    `location` is `file[:line[:col]]`, matched against the locations the action's IR
    carries (a path suffix matches)."""
    where = parse_location(location) if location else None
    chosen = []
    for action in actions:
        if tag is not None and not fnmatchcase(action.tag, tag):
            continue
        if pass_name is not None and not any(
                a.tag == "pass-execution" and fnmatchcase(a.pass_name or "", pass_name)
                for a in action.backtrace()):
            continue
        if where is not None and not _matches_location(action, where):
            continue
        chosen.append(action)
    return chosen


ADAPTOR_PASSES = ("mlir::detail::OpToOpPassAdaptor",)


def pass_runs(log: ActionLog) -> list[Action]:
    """Pass executions in the order they completed (when their IR would be printed), without
    the pass manager's own adaptor (MLIR prints no IR for it)."""
    runs = [a for a in log.actions
            if a.tag == "pass-execution" and a.end is not None
            and a.pass_name not in ADAPTOR_PASSES]
    runs.sort(key=lambda a: a.end or 0)
    return runs


def _step_target(step: Step) -> str | None:
    label = step.target or step.scope
    return label.rsplit("/", 1)[-1] if label else None


def steps_of_runs(log: ActionLog, steps: list[Step]) -> dict[int, Step]:
    """Action index of a pass run -> the step its IR dump became.

    A step matches a run of the same pass on the same operation: the first such run
    after the previous match (runs whose IR was not printed, as with
    `--mlir-print-ir-after-change`, are passed over), else the first one not yet matched
    (dumps a little out of run order, as IR tree siblings can be).
    """
    runs = pass_runs(log)
    by_key: dict[tuple[str | None, str | None], list[int]] = {}
    for position, run in enumerate(runs):
        by_key.setdefault((run.pass_name, run.target), []).append(position)
    used: set[int] = set()
    joined: dict[int, Step] = {}
    last = -1
    for step in steps:
        if step.kind not in ("pass", "pass-failed"):
            continue
        candidates = [p for p in by_key.get((step.pass_name, _step_target(step)), [])
                      if p not in used]
        if step.target and "/" in step.target:  # a nesting path (IR tree): compare it whole
            exact = [p for p in candidates if run_path(runs[p]) == step.target]
            candidates = exact or candidates
        if not candidates:
            continue
        pick = next((p for p in candidates if p > last), candidates[0])
        used.add(pick)
        last = max(last, pick)
        joined[runs[pick].index] = step
    return joined


def run_path(run: Action) -> str:
    """The nesting of the operation a pass ran on, from the enclosing pass runs' operations
    (`builtin.module @m/func.func @f`), as IR tree steps name their scope."""
    path: list[str] = []
    for action in reversed(run.backtrace()):
        target = action.target if action.tag == "pass-execution" else None
        if target and (not path or path[-1] != target):
            path.append(target)
    return "/".join(path)


def step_of(action: Action, joined: dict[int, Step]) -> Step | None:
    """The step an action's pass run produced (from `steps_of_runs`), or None."""
    run = action.pass_run()
    return joined.get(run.index) if run is not None else None



# --- Chrome trace export -------------------------------------------------------------------

def _event_name(action: Action) -> str:
    if action.tag == "pass-execution" and action.pass_name:
        return action.pass_name
    if action.tag == "apply-pattern" and action.pattern:
        return action.pattern
    return action.printed.strip("`") or action.tag


def chrome_trace(log: ActionLog, actions: Iterable[Action] | None = None) -> dict:
    """The actions as a Chrome Trace Event Format object (Perfetto, chrome://tracing).

    The log has no clock, so its line sequence is the time: an action starts at its begin
    line's position and lasts until its completion line's (one microsecond a line). Each
    action is a complete event (`"ph": "X"`) on its thread's track; skipped actions are
    instant events; an action never completed lasts to the end of the log. Passing
    `actions` exports only those (a filter's result).
    """
    chosen = log.actions if actions is None else list(actions)
    threads: dict[str, int] = {}
    for action in log.actions:
        threads.setdefault(action.thread, len(threads) + 1)
    events: list[dict] = [{"name": "process_name", "ph": "M", "pid": 1, "tid": 0,
                           "args": {"name": log.file}}]
    for thread, tid in threads.items():
        events.append({"name": "thread_name", "ph": "M", "pid": 1, "tid": tid,
                       "args": {"name": thread}})
    for action in chosen:
        args: dict[str, object] = {"printed": action.printed, "line": action.line}
        if action.units:
            args["ir"] = action.units
        if action.operation:
            args["operation"] = action.operation
        if action.breakpoint:
            args["breakpoint"] = action.breakpoint
        event: dict[str, object] = {"name": _event_name(action), "cat": action.tag,
                                    "pid": 1, "tid": threads[action.thread],
                                    "ts": action.begin, "args": args}
        if action.skipped:
            event.update(ph="i", s="t")
        else:
            end = action.end if action.end is not None else log.events
            event.update(ph="X", dur=end - action.begin)
            if action.end is None:
                args["completed"] = False
        events.append(event)
    return {"traceEvents": events,
            "otherData": {"source": log.file, "time": "log line sequence, 1 us per line"}}


def load_module_actions(root: Path, module: Module) -> tuple[ActionLog, dict[int, Step]] | None:
    """A module's action log (its `mlir-action-log` artifact) with its pass runs joined to
    the module's steps (see `steps_of_runs`); None when the module has no action log.
    Raises `ReadError` when the log cannot be read."""
    artifact = next((a for a in module.artifacts if a.kind == "mlir-action-log"), None)
    if artifact is None:
        return None
    log = read_action_log(read_bytes(root, Source(artifact.file)), artifact.file)
    return log, steps_of_runs(log, module.steps)
