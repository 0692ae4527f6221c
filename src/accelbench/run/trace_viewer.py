"""`microbench traces DIR`: xprof's web viewer over kept traces, on 127.0.0.1 alone. xprof's own command
listens everywhere and starts a gRPC worker on `*:50051` (a trace names the code it ran), so the page
is served here without that worker (it only splits several hosts' traces across machines)."""

from __future__ import annotations

import logging
import os
import socket
import sys
from typing import Any

from accelbench.errors import UserError, visible
from accelbench.platform import streams

LOCAL = "127.0.0.1"
DEFAULT_PORT = 8791  # xprof's own; another free port where it is taken and none was named


def serve(args: Any) -> int:
    logdir, port = args.logdir, args.port
    if not os.path.isdir(logdir):
        why = "is not a folder" if os.path.exists(logdir) else "no such folder"
        raise UserError(why, key=f"traces '{logdir}'")
    # its notes on start-up, each request and each trace's first visit (logged as errors): the page
    # shows what fails
    quiet = logging.getLogger("tensorboard.plugins.profile")
    quiet.addFilter(lambda record: record.levelno >= logging.CRITICAL)
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")  # its converters' notes, before they load
    streams.spell_out_controls()  # xprof prints the paths it reads as they are
    try:
        from cheroot import wsgi
        from xprof import server
    except ImportError as error:
        raise UserError(
            f"xprof is not installed ({error}): pip install 'accelbench[trace]'", key="traces"
        ) from None
    from xprof import profile_plugin

    if not all(hasattr(server, n) for n in ("TBContext", "DataProvider", "make_wsgi_app")):
        raise UserError("this xprof's server cannot be held to 127.0.0.1: pip install -U xprof")
    if hasattr(profile_plugin, "_logging_wrapper"):  # a JSON line per request, for Cloud Logging
        profile_plugin._logging_wrapper = lambda app, *args, **kwargs: app
    root = os.path.abspath(logdir)
    context = server.TBContext(root, server.DataProvider(root), server.TBContext.Flags(False))
    context.hide_capture_profile_button = True  # the page reads traces; it reaches out to nothing
    app = server.make_wsgi_app(server.ProfilePluginLoader().load(context))
    httpd = _listening(wsgi, app, port)
    bound = httpd.socket.getsockname()[1]
    kept = (".xplane.pb", ".trace.json.gz", ".pt.trace.json")
    if not any(n.endswith(kept) for _, _, names in os.walk(root) for n in names):
        print(visible(f"warning: no trace under {logdir} yet"), file=sys.stderr)
    where = f"http://{LOCAL}:{bound}/ over {logdir}"
    print(visible(f"xprof on {where} (this machine only; Ctrl-C stops it)"), flush=True)
    try:
        httpd.serve()
        code = 0
    except KeyboardInterrupt:
        code = 130
    except SystemExit as stop:  # SIGTERM (and Ctrl-C) as the command line takes them: one is enough
        code = int(stop.code or 0)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)  # xprof's threads (a trace still being converted) never hold the exit


def _listening(wsgi: Any, app: Any, port: int | None) -> Any:
    """Bound to 127.0.0.1 on the port named (taken: one line), else xprof's usual one or a free one."""
    for tried in (port,) if port else (DEFAULT_PORT, 0):
        with socket.socket() as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the server binds
            try:
                probe.bind((LOCAL, tried))
            except OSError as error:
                if port:
                    raise UserError(
                        f"cannot listen on {LOCAL}:{port}: {error.strerror}", key="--port"
                    ) from None
                continue
        httpd = wsgi.Server((LOCAL, tried), app)
        httpd.prepare()
        return httpd
    raise AssertionError("port 0 is always free")
