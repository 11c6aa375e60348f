"""uvicorn's HTTP/1.1 protocol with a header read timeout.

uvicorn closes idle keep-alive connections but waits forever for the headers of a
request that a client sends slowly (a "slowloris" client holds a connection and a file
descriptor per half-sent request). This protocol closes a connection whose request
headers are not complete ``header_timeout`` seconds after the connection opened or the
previous response was sent (``$GROUNDRL_HEADER_TIMEOUT`` seconds, default 10, read when
the module is imported, so uvicorn's worker processes inherit the setting). Pass it as
``uvicorn.run(app, http=HeaderTimeoutH11)``.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any

from uvicorn.protocols.http.h11_impl import H11Protocol

ENV = "GROUNDRL_HEADER_TIMEOUT"
HEADER_TIMEOUT_S = float(os.environ.get(ENV) or 10.0)


class HeaderTimeoutH11(H11Protocol):
    header_timeout: float = HEADER_TIMEOUT_S

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def _arm(self) -> None:
        self._waiting_for = self.cycle  # headers are complete once a new cycle exists
        self._header_timer: asyncio.TimerHandle | None = self.loop.call_later(
            self.header_timeout, self._headers_too_slow
        )

    def _disarm(self) -> None:
        timer = getattr(self, "_header_timer", None)
        if timer is not None:
            timer.cancel()
            self._header_timer = None

    def handle_events(self) -> None:
        super().handle_events()
        if self.cycle is not getattr(self, "_waiting_for", self.cycle):
            self._disarm()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing():
            self._disarm()
            self._arm()

    def connection_lost(self, exc: Any) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _headers_too_slow(self) -> None:
        self._header_timer = None
        if not self.transport.is_closing():
            self.transport.close()
