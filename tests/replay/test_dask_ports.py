"""`--dask-workers N` listens on no port the user did not ask for: the local cluster's
scheduler, nannies and workers talk on 127.0.0.1, and none starts an HTTP server."""

from __future__ import annotations

from importlib.util import find_spec

import pytest

from workbench.replay.triage.dask_engine import DaskSettings, _client

psutil = pytest.importorskip("psutil")
if find_spec("distributed") is None:  # looked for, not imported: collection need not pay it
    pytest.skip("could not import 'distributed'", allow_module_level=True)


def _listening() -> set[tuple[str, int]]:
    """Every (address, port) this process and its children listen on."""
    me = psutil.Process()
    found = set()
    for process in [me, *me.children(recursive=True)]:
        try:
            connections = process.net_connections(kind="inet")
        except psutil.Error:
            continue
        found |= {(c.laddr.ip, c.laddr.port) for c in connections
                  if c.status == psutil.CONN_LISTEN}
    return found


def _host_port(address: str) -> tuple[str, int]:
    host, _, port = address.removeprefix("tcp://").rpartition(":")
    return host, int(port)


def test_a_local_cluster_listens_only_where_dask_talks() -> None:
    before = _listening()
    with _client(DaskSettings(local_workers=2)) as client:
        info = client.scheduler_info()
        talking = {_host_port(client.scheduler.address)}
        for address, worker in info["workers"].items():
            talking |= {_host_port(address), _host_port(worker["nanny"])}
        opened = _listening() - before
    assert len(talking) == 5
    assert opened == talking
    assert {host for host, _ in opened} == {"127.0.0.1"}
