"""Key-to-frame latency while a triage runs, against the same keys with nothing running; and
paging through the diff of the largest module.

    python benchmarks/tui_latency.py [--keys 60] [--interval 0.1]

On the large real dump (benchmarks/large_dump.py makes it with JAX when missing) the app runs
headless at 120x40. A key is posted as a terminal would send it every INTERVAL seconds; its
latency is the time from posting it to the first frame drawn after the app acted on it.

  1. idle: `j`/`k` in the timeline of the largest module (each move also loads that step's
     diff in the background, as in use) — the baseline;
  2. the same keys while `T` triages every module of the dump in worker processes;
  3. page down through the diff of the largest module's largest step (about 6,000 lines).
"""

from __future__ import annotations

import argparse
import asyncio

from textual.pilot import Pilot
from tui_harness import key_latency, large_dump, percentiles, start_clock

from workbench.stats import IrStats
from workbench.tui.app import WorkbenchApp
from workbench.tui.panes.diff import DiffPane
from workbench.tui.panes.modules import ModulesPane
from workbench.tui.panes.timeline import TimelinePane


async def settle(pilot: Pilot) -> None:
    for _ in range(3):
        await pilot.pause(0.2)
        await pilot.app.workers.wait_for_complete()


async def timeline_keys(app: WorkbenchApp, count: int, interval: float,
                        until=None) -> list[float]:  # type: ignore[no-untyped-def]  # the harness's wait, untyped
    table = app.pane(TimelinePane).table
    samples: list[float] = []
    direction = "j"
    for _ in range(count):
        if until is not None and until():
            break
        if table.cursor >= len(table.rows) - 1:
            direction = "k"
        elif table.cursor == 0:
            direction = "j"
        before = table.cursor
        samples.append(await key_latency(app, direction, lambda b=before: table.cursor != b))
        await asyncio.sleep(interval)
    return samples


async def run(keys: int, interval: float) -> None:
    folder, how = large_dump()
    print(f"dump: {how}: {folder}")
    start_clock()
    app = WorkbenchApp(folder, watch=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        largest = max(app.dump.modules, key=lambda m: len(m.steps))
        app.pane(ModulesPane).show_module(largest.key)
        await settle(pilot)
        app.action_focus_pane("TimelinePane")
        await settle(pilot)
        print(f"module {largest.key} ({largest.name}): {len(largest.steps)} steps")

        idle = await timeline_keys(app, keys, interval)
        print(f"  idle                  {percentiles(idle)}")

        loaded: list[float] = []
        triaged = triages = 0
        while len(loaded) < keys:  # triage again if it ends before enough keys were timed
            app.action_triage()
            job = app.jobs.current
            assert job is not None
            triages += 1
            while job.done == 0 and app.jobs.busy:  # the workers are up and reporting
                await asyncio.sleep(0.05)
            loaded += await timeline_keys(app, keys - len(loaded), interval,
                                          until=lambda: not app.jobs.busy)
            app.action_cancel()
            while app.jobs.busy:
                await asyncio.sleep(0.05)
            triaged += job.done
        print(f"  during triage         {percentiles(loaded)}  ({triages} triage runs, "
              f"{triaged} executions triaged while keys were pressed)")
        if idle and loaded:
            ratio = sorted(loaded)[len(loaded) // 2] / sorted(idle)[len(idle) // 2]
            print(f"  median ratio, triage / idle: {ratio:.2f}x")

        timeline = app.pane(TimelinePane)
        lines = {s.index: st.lines for s in largest.steps
                 if isinstance(st := app.step_facts(s).stats, IrStats)}
        biggest = largest.steps[max(lines, key=lines.__getitem__)]
        timeline.show_step(biggest)
        await settle(pilot)
        diff = app.pane(DiffPane)
        rows = len(diff.view.document.rows)
        app.action_focus_pane("DiffPane")
        await settle(pilot)
        view = diff.view
        pages: list[float] = []
        for _ in range(keys):
            if view.scroll_offset.y >= view.max_scroll_y:
                break
            before = view.scroll_offset.y
            pages.append(await key_latency(app, "pagedown",
                                           lambda b=before: view.scroll_offset.y != b))
        print(f"  diff page down        {percentiles(pages)}  ({biggest.label}: {rows:,} rows, "
              f"{lines[biggest.index]:,} lines)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keys", type=int, default=60)
    parser.add_argument("--interval", type=float, default=0.1)
    args = parser.parse_args()
    asyncio.run(run(args.keys, args.interval))


if __name__ == "__main__":
    main()
