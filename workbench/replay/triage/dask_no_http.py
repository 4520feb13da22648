"""Dask's scheduler and worker without their HTTP servers, for the local cluster of
`--dask-workers N`.

distributed starts an HTTP server on every scheduler and worker (the dashboard, JSON and
metrics pages) whatever its dashboard settings say: with no routes it still listens on a port.
A local cluster is the user's own machine running jobs: it listens on the ports Dask needs to
talk to itself, on 127.0.0.1, and on no other. Imported only where a local cluster is made (the
workers import it by name when they start), so `distributed` stays optional.
"""

from __future__ import annotations

from typing import Any

from distributed import Nanny, Scheduler, Worker
from distributed.http.routing import RoutingApplication


class _NoHttpServer:
    """`ServerNode.start_http_server` that listens on nothing: an empty application, which
    the node's shutdown stops, and no server (only the dashboard, off here, would use it)."""

    def start_http_server(self, routes: Any, dashboard_address: Any, default_port: int = 0,
                          ssl_options: Any = None) -> None:
        self.http_application = RoutingApplication([])


class NoHttpScheduler(_NoHttpServer, Scheduler):
    """A scheduler with no HTTP server (no dashboard, no pages)."""


class NoHttpWorker(_NoHttpServer, Worker):
    """A worker with no HTTP server."""


class NoHttpNanny(Nanny):
    """A nanny whose worker process runs a `NoHttpWorker`."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs["worker_class"] = NoHttpWorker
        super().__init__(*args, **kwargs)
