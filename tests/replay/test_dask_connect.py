"""`--scheduler`: a bad address, a closed port and a peer that accepts and never answers each
end with a clear message within `--connect-timeout`; a scheduler not on this machine gets a
warning that a Dask cluster must be trusted; a local cluster serves no dashboard. Only
loopback addresses are used."""

from __future__ import annotations

import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from workbench.cli import main
from workbench.replay.triage.dask_engine import DaskSettings, cluster_client, is_local_address

DUMP = Path(__file__).parents[1] / "data" / "corpus" / "xla" / "layernorm-broken-fusion"
WAIT = 120  # seconds a test waits for the command before calling it hung (never reached)


def _triage(words: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    """Run `workbench triage` in a process, so a hang fails the test (at WAIT) instead of
    stopping the suite."""
    done = subprocess.run([sys.executable, "-m", "workbench", "triage", str(DUMP), "--no-cache",
                           *words], capture_output=True, text=True, timeout=WAIT)
    return done.returncode, done.stderr


@pytest.fixture
def silent_peer() -> Iterator[str]:
    """A loopback socket that accepts connections and never says a word."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    yield f"tcp://127.0.0.1:{server.getsockname()[1]}"
    server.close()


@pytest.fixture
def closed_port() -> str:
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    return f"tcp://127.0.0.1:{port}"


def test_a_peer_that_never_answers_ends_at_the_timeout(
        silent_peer: str, capsys: pytest.CaptureFixture[str]) -> None:
    status, err = _triage(["--scheduler", silent_peer, "--connect-timeout", "1"], capsys)
    assert status == 2
    assert f"no Dask scheduler answered at {silent_peer} within 1 s (--connect-timeout)" in err
    assert "Traceback" not in err


def test_a_closed_port_is_unreachable(closed_port: str,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    status, err = _triage(["--scheduler", closed_port, "--connect-timeout", "1"], capsys)
    assert status == 2
    assert closed_port in err and "Traceback" not in err
    assert "cannot reach a Dask scheduler" in err or "no Dask scheduler answered" in err


@pytest.mark.parametrize("address", ["not an address", "tcp://127.0.0.1:99999",
                                     "foo://127.0.0.1:1", "tcp://[::1:1", "tcp://:8786"])
def test_a_bad_address_is_refused_at_once(address: str,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    status, err = _triage(["--scheduler", address, "--connect-timeout", "60"], capsys)
    assert status == 2
    assert f"--scheduler {address}: not a scheduler address" in err
    assert "Traceback" not in err


def test_a_remote_scheduler_gets_the_trust_warning(closed_port: str,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    # An address in TEST-NET-1 (RFC 5737) with a bad port: the warning is printed, and the
    # address is refused before anything is sent anywhere.
    status, err = _triage(["--scheduler", "tcp://192.0.2.1:0"], capsys)
    assert status == 2
    assert "is not on this machine; a Dask cluster exchanges pickles" in err
    assert "use only a cluster you trust" in err
    status, err = _triage(["--scheduler", closed_port, "--connect-timeout", "1"], capsys)
    assert "pickles" not in err


def test_local_addresses() -> None:
    assert is_local_address("tcp://127.0.0.1:8786")
    assert is_local_address("tcp://localhost:8786")
    assert is_local_address("tcp://[::1]:8786")
    assert not is_local_address("tcp://10.0.0.5:8786")
    assert not is_local_address("tcp://host-a:8786")


@pytest.mark.parametrize("value", ["0", "-1", "nan"])
def test_the_connect_timeout_is_seconds(value: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["triage", str(DUMP), f"--connect-timeout={value}"])
    assert "argument --connect-timeout" in capsys.readouterr().err


def test_a_local_cluster_serves_no_dashboard() -> None:
    """No HTTP server at all (tests/replay/test_dask_ports.py: no port but Dask's own)."""
    with cluster_client(DaskSettings(local_workers=1)) as client:
        assert client.run_on_scheduler(
            lambda dask_scheduler: sorted(dask_scheduler.services)) == []
        assert list(client.run(lambda dask_worker: sorted(dask_worker.services)).values()) == [[]]
        assert client.run_on_scheduler(
            lambda dask_scheduler: hasattr(dask_scheduler, "http_server")) is False
