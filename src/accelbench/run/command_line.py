"""What every command line shares (`microbench`, `jax-bench`, `tpums`): options declared as data,
option errors as one line and exit 2, bounded numbers, signals as quiet exits, the process's end."""

from __future__ import annotations

import argparse
import contextlib
import errno
import functools
import os
import signal
import sys
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, NoReturn, Protocol

from accelbench.core.flags import Flag
from accelbench.core.options import RunOptions
from accelbench.errors import UserError, visible
from accelbench.limits import MAX_QUOTED, MAX_SECONDS
from accelbench.platform import interrupt, processes, streams

# a run's earlier files: one stop/resume contract, taken by every command line that runs
RESUME: Flag[bool] = Flag(
    "--resume", "skip cases already in the output files (finish an interrupted run)", False,
    switch=True,
)  # fmt: skip
OVERWRITE: Flag[bool] = Flag("--overwrite", "replace existing results files", False, switch=True)
RUN_FILES: tuple[Flag[Any], ...] = (RESUME, OVERWRITE)


@functools.cache
def setting_flags() -> tuple[Flag[str | None], ...]:
    """The run settings declared `option` (core/case.py): --NAME, over what the config says, for every
    case (read when a parser needs them: `--help` imports no case)."""
    from accelbench.core.case import declared_settings

    return tuple(
        Flag(
            f"--{f.name.replace('_', '-')}",
            f.metadata["doc"],
            None,
            choices=f.metadata["rule"].choices,
        )
        for f in declared_settings()
        if f.metadata["option"]
    )


def add_run_files(parser: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    for flag in (*RUN_FILES, *setting_flags()):
        flag.add_to(parser)


def run_files(args: argparse.Namespace) -> RunOptions:
    """--resume, --overwrite and the run settings given as options."""
    given = ((f.dest, getattr(args, f.dest, None)) for f in setting_flags())
    return RunOptions(
        resume=bool(getattr(args, RESUME.dest, False)),
        overwrite=bool(getattr(args, OVERWRITE.dest, False)),
        settings=tuple((name, value) for name, value in given if value is not None),
    )


class Option(Protocol):
    def add_to(self, parser: Any) -> None: ...


@dataclass(frozen=True)
class Arg:
    """One argument of a command line as data: its spellings and argparse's keywords."""

    names: tuple[str, ...]
    how: dict[str, Any]

    def add_to(self, parser: Any) -> None:
        parser.add_argument(*self.names, **self.how)


def arg(*names: str, **how: Any) -> Arg:
    return Arg(names, how)


class Group:
    """Options under a heading (`title`), or without one, options of which one at most is given."""

    def __init__(self, *options: Option, title: str | None = None) -> None:
        self.options, self.title = options, title

    def add_to(self, parser: Any) -> None:
        titled = self.title is not None
        group = (
            parser.add_argument_group(self.title)
            if titled
            else parser.add_mutually_exclusive_group()
        )
        for option in self.options:
            option.add_to(group)


@dataclass(frozen=True)
class Lazy:
    """Options the registries declare, read when the parser is built (never on import)."""

    options: Callable[[], Sequence[Option]]

    def add_to(self, parser: Any) -> None:
        for option in self.options():
            option.add_to(parser)


@dataclass(frozen=True)
class Command:
    """A subcommand as data: what it does, an example (its help shows both), its handler and options."""

    name: str
    summary: str
    example: str
    main: Callable[[argparse.Namespace], int] | None
    options: tuple[Option, ...]
    parser: dict[str, Any]
    defaults: dict[str, Any] = field(default_factory=dict)

    def add_to(self, sub: argparse._SubParsersAction, options: bool = True) -> None:
        """Its parser, with its options or (listing the commands: `--help`) without."""
        p = sub.add_parser(
            self.name,
            help=self.summary,
            description=f"{self.summary}. Example: {self.example}",
            formatter_class=argparse.RawDescriptionHelpFormatter,
            **self.parser,
        )
        for option in self.options if options else ():
            option.add_to(p)
        p.set_defaults(**self.defaults)


def command(
    name: str, summary: str, example: str, main: Any, *options: Option, **parser: Any
) -> Command:
    return Command(name, summary, example, main, options, parser)


class OneLineParser(argparse.ArgumentParser):
    """Option errors like config errors: one line on stderr, exit code 2."""

    def error(self, message: str) -> NoReturn:
        print(f"error: {message}", file=sys.stderr)
        sys.exit(2)


def count(low: int, high: int) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:  # ASCII digits only, as a config's YAML reads them ('١٠٢٤' is no number there)
            value = int(text[:40]) if text.isascii() else None
        except ValueError:
            value = None
        if value is None or not low <= value <= high or len(text) > 40:
            raise argparse.ArgumentTypeError(
                f"must be an integer from {low} to {high:,}, got {text[:MAX_QUOTED]!r}"
            )
        return value

    return parse


def seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"must be a positive number of seconds, got {text!r}"
        ) from None
    if not 0 < value <= MAX_SECONDS:  # NaN and infinity fail this too
        raise argparse.ArgumentTypeError(
            f"must be a positive number of seconds up to {MAX_SECONDS:g}, got {text[:MAX_QUOTED]}"
        )
    return value


def _quit(signum: int, frame: object) -> None:
    """Ctrl-C or SIGTERM outside a run's cases: a quiet exit, 128 + the signal."""
    print("interrupted", file=sys.stderr, flush=True)
    raise SystemExit(128 + signum)


def take_signals() -> None:
    if threading.current_thread() is threading.main_thread():
        for sig in interrupt.STOPPING:  # a run replaces them with a flag while its cases run
            signal.signal(sig, _quit)
        processes.watch_launcher()  # a worker of `run --processes N` ends with its launcher
        interrupt.keep_swallowed()


def serve(command: Callable[[], int]) -> int:
    try:
        return command()
    except UserError as error:
        print(f"error: {error}", file=sys.stderr)
        return error.exit_code
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return interrupt.exit_code()
    except BrokenPipeError:  # `microbench list --json | head`: the reader left, nothing is wrong
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except Exception as error:  # a stop that landed in code which raised its own error from it
        if isinstance(error, OSError) and error.errno == errno.ENAMETOOLONG:  # bad input: a path
            name = visible(str(error.filename))
            name = name if len(name) <= 80 else f"{name[:40]}...{name[-20:]}"
            print(f"error: {name}: {error.strerror}", file=sys.stderr)
            return 2
        stop = _stop_behind(error)
        if stop is None:
            raise
        if isinstance(stop, SystemExit):  # _quit said so already
            return int(stop.code or 0)
        print("interrupted", file=sys.stderr)
        return 130


def _stop_behind(error: BaseException) -> SystemExit | KeyboardInterrupt | None:
    """The Ctrl-C or SIGTERM an error was raised while handling (a C extension importing when it
    landed: `PyCapsule_Import could not import module "datetime"`)."""
    seen: set[int] = set()
    cause: BaseException | None = error
    while cause is not None and id(cause) not in seen:
        if isinstance(cause, SystemExit | KeyboardInterrupt):
            return cause
        seen.add(id(cause))
        cause = cause.__cause__ or cause.__context__
    return None


def guarded_main(main_: Callable[[], int]) -> NoReturn:
    """main, then exit, ignoring a late Ctrl-C (it would kill the interpreter's shutdown); a console
    refusing writes (a full disk) is one line on stderr, where that works, and exit 1."""
    streams.guard_standard_streams()
    try:
        code = main_()
    except streams.OutputLost as lost:
        with contextlib.suppress(streams.OutputLost, OSError):
            print(f"error: {lost}", file=sys.stderr, flush=True)
        streams.discard_output()
        code = 1
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    sys.exit(code)


def command_main(run: Callable[[], int]) -> int:
    from accelbench.platform import chatter

    take_signals()
    chatter.route(0)
    return serve(run)
