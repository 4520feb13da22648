"""Report on the development set: `workbench triage` on every dump of the chosen sets.

    python benchmarks/devset/report.py [SET ...] [--out OUT] [--linear] [--jobs N] [--json]

A set is a folder of OUT (default `$DEVSET_OUT` or `/work/devset-dumps`, as `make.py` writes
it): either one dump (it holds `module_*` files itself, like `jax-suite/`) or a folder of
dumps, one per program or test file (`lowp/<program>/`, `jax-tests/<file>/`). Each dump is
triaged by the installed `workbench` (`workbench triage DIR --json --jobs N`, with `--linear`
when asked) and counted per set: executions, ok, unsupported (grouped by reason), mismatch
(module, execution and culprit step) and error (reason). `--json` prints the same as one JSON
object (`--write-json FILE` writes it beside the tables); `--keep DIR` also saves each dump's
triage JSON there.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

DEFAULT_OUT = Path(os.environ.get("DEVSET_OUT", "/work/devset-dumps"))
STATUSES = ("ok", "unsupported", "mismatch", "error")
REASON = re.compile(r"\b(unsupported|error): (.*?)(?:;|$)")


@dataclass
class DumpReport:
    """One dump's triage, counted."""

    set: str
    dump: str
    path: str
    files: int = 0
    bytes: int = 0
    executions: int = 0
    counts: Counter = field(default_factory=Counter)
    unsupported: Counter = field(default_factory=Counter)  # reason -> executions
    mismatches: list[dict] = field(default_factory=list)
    errors: list[dict] = field(default_factory=list)
    seconds: float = 0.0
    failure: str = ""  # when triage itself did not give a result list

    def to_json(self) -> dict:
        return {"set": self.set, "dump": self.dump, "path": self.path, "files": self.files,
                "bytes": self.bytes, "executions": self.executions,
                **{status: self.counts[status] for status in STATUSES},
                "unsupported_reasons": dict(self.unsupported.most_common()),
                "mismatches": self.mismatches, "errors": self.errors,
                "seconds": round(self.seconds, 1), "failure": self.failure}


def find_workbench(option: str | None) -> str:
    """The `workbench` command: the option, the one beside this interpreter, or on PATH."""
    if option:
        return option
    beside = Path(sys.executable).parent / "workbench"
    if beside.is_file():
        return str(beside)
    found = shutil.which("workbench")
    if found is None:
        sys.exit("report.py: no `workbench` command (pip install -e . or --workbench PATH)")
    return found


def dumps_of(folder: Path) -> list[Path]:
    """A set folder is one dump when it holds module files, else each subfolder is one."""
    if any(path.name.startswith("module_") for path in folder.iterdir()):
        return [folder]
    return sorted(path for path in folder.iterdir() if path.is_dir())


def folder_size(folder: Path) -> tuple[int, int]:
    files = size = 0
    for directory, _, names in os.walk(folder):
        for name in names:
            files += 1
            size += os.stat(os.path.join(directory, name)).st_size
    return files, size


def reasons(result: dict, status: str) -> list[str]:
    """Why an execution is unsupported or an error: its skipped steps' statuses, or the
    reason its detail gives (a reference that cannot be evaluated, unreadable inputs)."""
    found = [step["status"].split(": ", 1)[1] for step in result.get("skipped", [])
             if step.get("status", "").startswith(f"{status}: ")]
    if not found:
        found = [match.group(2) for match in REASON.finditer(result.get("detail", ""))
                 if match.group(1) == status]
    return sorted(set(found)) or [result.get("detail", "") or "(no reason given)"]


def culprit_name(result: dict) -> str:
    culprit = result.get("culprit")
    if culprit:
        xla = "" if culprit.get("xla_step") is None else f"{culprit['xla_step']:04d} "
        return f"step {culprit['index']} ({xla}{culprit['pass']})"
    candidates = result.get("culprit_candidates") or []
    if candidates:
        return f"one of steps {candidates[0]['index']} to {candidates[-1]['index']}"
    return "recorded result only"


def count(report: DumpReport, results: list[dict]) -> None:
    report.executions = len(results)
    for result in results:
        status = result["status"]
        report.counts[status] += 1
        where = {"module": result["module"], "name": result["name"],
                 "execution": result["execution"]}
        if status == "unsupported":
            report.unsupported.update(reasons(result, "unsupported"))
        elif status == "mismatch":
            report.mismatches.append({**where, "culprit": culprit_name(result),
                                      "detail": result.get("detail", "")})
        elif status == "error":
            report.errors.append({**where, "reason": "; ".join(reasons(result, "error"))})


def triage(workbench: str, set_name: str, dump: Path, args: argparse.Namespace) -> DumpReport:
    name = dump.name if dump.name != set_name else set_name
    report = DumpReport(set_name, name, str(dump))
    report.files, report.bytes = folder_size(dump)
    command = [workbench, "triage", str(dump), "--json", "--jobs", str(args.jobs)]
    if args.linear:
        command.append("--linear")
    if args.time_limit:
        command += ["--time-limit", str(args.time_limit)]
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True)
    report.seconds = time.perf_counter() - start
    try:
        payload = json.loads(done.stdout)
    except json.JSONDecodeError:
        tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
        report.failure = f"triage exited {done.returncode}: {tail}"
        return report
    if args.keep:
        keep = args.keep / set_name / f"{name}.json"
        keep.parent.mkdir(parents=True, exist_ok=True)
        keep.write_text(json.dumps(payload, indent=1))
    count(report, payload["results"])
    return report


def print_set(set_name: str, reports: list[DumpReport]) -> None:
    print(f"== {set_name}")
    header = f"{'dump':34s} {'files':>7s} {'MB':>7s} {'exec':>6s}" + "".join(
        f" {status:>11s}" for status in STATUSES) + f" {'seconds':>8s}"
    print(header)
    total = Counter()
    for report in reports:
        total.update(report.counts)
        total["executions"] += report.executions
        line = (f"{report.dump:34s} {report.files:7d} {report.bytes / 1e6:7.1f} "
                f"{report.executions:6d}" + "".join(f" {report.counts[s]:11d}" for s in STATUSES)
                + f" {report.seconds:8.1f}")
        print(line + (f"  FAILED: {report.failure}" if report.failure else ""))
    print(f"{'total':34s} {'':7s} {'':7s} {total['executions']:6d}"
          + "".join(f" {total[s]:11d}" for s in STATUSES))
    unsupported = Counter()
    for report in reports:
        unsupported.update(report.unsupported)
    if unsupported:
        print("unsupported (executions, reason):")
        for reason, number in unsupported.most_common():
            print(f"  {number:5d}  {reason}")
    for report in reports:
        for item in report.mismatches:
            print(f"mismatch: {report.dump} {item['module']} ({item['name']}) "
                  f"{item['execution']}: {item['culprit']}")
    for report in reports:
        for item in report.errors:
            print(f"error: {report.dump} {item['module']} ({item['name']}) "
                  f"{item['execution']}: {item['reason']}")
    print()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sets", nargs="*", help="sets to report on (default: every folder of OUT)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT,
                        help="the dumps' folder (default $DEVSET_OUT or %(default)s)")
    parser.add_argument("--only", nargs="+", default=[], metavar="DUMP",
                        help="only these dumps of the sets (folder names)")
    parser.add_argument("--jobs", type=int, default=2, help="triage --jobs (default 2)")
    parser.add_argument("--linear", action="store_true", help="triage --linear")
    parser.add_argument("--time-limit", type=float, help="triage --time-limit, per job")
    parser.add_argument("--workbench", help="the workbench command (default: beside this "
                        "interpreter, else on PATH)")
    parser.add_argument("--keep", type=Path, metavar="DIR",
                        help="also save each dump's triage JSON as DIR/<set>/<dump>.json")
    parser.add_argument("--json", action="store_true", help="one JSON object instead of tables")
    parser.add_argument("--write-json", type=Path, metavar="FILE",
                        help="also write that JSON object to FILE")
    args = parser.parse_args(argv)
    workbench = find_workbench(args.workbench)
    names = args.sets or sorted(p.name for p in args.out.iterdir() if p.is_dir())
    for set_name in names:
        if not (args.out / set_name).is_dir():
            parser.error(f"no set {set_name!r} in {args.out}")
    chosen = {name: [d for d in dumps_of(args.out / name) if not args.only or d.name in args.only]
              for name in names}
    missing = set(args.only) - {d.name for dumps in chosen.values() for d in dumps}
    if missing:
        parser.error(f"no dump {', '.join(sorted(missing))} in the sets {', '.join(names)}")
    table: dict[str, list[DumpReport]] = {}
    for set_name, dumps in chosen.items():
        table[set_name] = [triage(workbench, set_name, dump, args) for dump in dumps]
        if not args.json:
            print_set(set_name, table[set_name])
    payload = {"workbench": workbench, "linear": args.linear,
               "sets": {name: [r.to_json() for r in reports] for name, reports in table.items()}}
    if args.write_json:
        args.write_json.write_text(json.dumps(payload, indent=1) + "\n")
    if args.json:
        print(json.dumps(payload, indent=1))
    failed = any(r.failure for reports in table.values() for r in reports)
    return 2 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
