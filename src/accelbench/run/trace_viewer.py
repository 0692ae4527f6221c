"""`microbench traces DIR`: xprof's web viewer over a run's kept traces, listening on this machine only
(127.0.0.1: xprof's own command listens on every interface, and a trace names the code it ran)."""

from __future__ import annotations

import os

from accelbench.errors import UserError

LOCAL = "127.0.0.1"


def serve(logdir: str, port: int) -> int:
    if not os.path.isdir(logdir):
        raise UserError("no such folder of traces", key=f"traces '{logdir}'")
    try:
        from xprof import server
    except ImportError as error:
        raise UserError(
            f"xprof is not installed ({error}): pip install 'accelbench[trace]'", key="traces"
        ) from None
    if not hasattr(server, "_get_wildcard_address"):  # where it listens is xprof's private choice
        raise UserError(
            "this xprof cannot be held to 127.0.0.1; `xprof --logdir DIR` serves it on every "
            "interface",
            key="traces",
        )
    server._get_wildcard_address = lambda port: LOCAL
    print(f"xprof on http://{LOCAL}:{port}/ over {logdir} (this machine only; Ctrl-C stops it)")
    server.start_server(logdir=os.path.abspath(logdir), port=port)
    return 0
