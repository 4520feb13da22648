"""The child process a Dask worker runs each job in: results, errors, time limits, stops,
deaths, and the client's settings for each call."""

from __future__ import annotations

import os
import time

import pytest

from tests.helpers.patience import FOREVER
from workbench.replay.processes.job_process import Died, JobProcess, Stopped, TimeLimit


@pytest.fixture(scope="module")
def child():
    process = JobProcess()
    yield process
    process.kill()


def test_calls_return_values_and_errors(child: JobProcess) -> None:
    assert child.call(divmod, (17, 5), None) == (3, 2)
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        child.call(divmod, (1, 0), None)
    assert child.call(divmod, (9, 2), 10.0) == (4, 1)  # still usable after an error


def test_environment_holds_for_one_call_only(child: JobProcess) -> None:
    assert child.call(os.getenv, ("WORKBENCH_TEST_SETTING",), None,
                      environment={"WORKBENCH_TEST_SETTING": "7"}) == "7"
    assert child.call(os.getenv, ("WORKBENCH_TEST_SETTING",), None) is None


def test_time_limit_kills_the_child() -> None:
    process = JobProcess()
    with pytest.raises(TimeLimit):  # the sleep would return after an hour
        process.call(time.sleep, (FOREVER,), 0.5)
    assert process.process.returncode is not None


def test_stop_request_kills_the_child() -> None:
    process = JobProcess()
    with pytest.raises(Stopped):
        process.call(time.sleep, (60,), None, should_stop=lambda: True)
    assert process.process.returncode is not None


def test_a_dying_child_is_reported() -> None:
    process = JobProcess()
    with pytest.raises(Died, match="exit status 3"):
        process.call(os._exit, (3,), None)
