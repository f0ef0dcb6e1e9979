"""The threaded HTTP server the fakes run on, sized like a real API's front door."""

from __future__ import annotations

from http.server import ThreadingHTTPServer


class FakeHTTPServer(ThreadingHTTPServer):
    """`ThreadingHTTPServer` with a listen backlog of 256 instead of 5: with the default,
    a burst of new connections (a pool opening at once) loses SYNs and waits out TCP's
    one-second retransmit, a stall no real platform API shows."""

    daemon_threads = True
    request_queue_size = 256
