"""A free TCP port on 127.0.0.1 for a server a test starts (it is bound and released: the usual small race)."""

from __future__ import annotations

import socket


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])
