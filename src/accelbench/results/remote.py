"""Paths given as URLs (`gs://bucket/run`): outputs, results read from a bucket, runs published to one.
Outputs are staged in a local folder per URL and copied through fsspec when the run ends, so rows reach
a disk whatever the network does; a remote file that exists is fetched first, for --resume."""

from __future__ import annotations

import atexit
import dataclasses
import hashlib
import json
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from accelbench.core.case import Case
from accelbench.errors import UserError
from accelbench.names import portable_name

DIR_FIELDS = ("trace_dir", "xla_dump_dir", "xlml_metrics_dir")
WRITABLE = ("gs", "gcs", "s3", "s3a", "az", "abfs", "abfss", "hdfs", "file", "memory")


def is_url(path: str | None) -> bool:
    return bool(path) and "://" in str(path)


def filesystem(url: str, key: str) -> Any:
    """The fsspec filesystem of a URL, or a one-line error naming the package it needs."""
    import fsspec

    protocol = url.split("://", 1)[0]
    if protocol.lower() not in WRITABLE:
        raise UserError(
            f"results cannot be written to {protocol[:20]}:// (writable: "
            f"{', '.join(p + '://' for p in WRITABLE)})",
            key=key,
        )
    try:
        return fsspec.filesystem(protocol)
    except ImportError as error:
        raise UserError(
            f"writing to {protocol}:// needs an fsspec backend that is not installed ({error})",
            key=key,
        ) from None
    except ValueError:
        raise UserError(f"no filesystem knows the protocol '{protocol}://'", key=key) from None


@dataclass
class Staging:
    """Local stand-ins for remote outputs, and the copies owed to each URL."""

    root: str = ""  # made on first use: a run without URLs leaves nothing behind
    files: dict[str, str] = field(default_factory=dict)  # local path -> URL
    dirs: dict[str, str] = field(default_factory=dict)

    def _local(self, url: str) -> str:
        """The same local folder for a URL in every run, so a killed run's rows can be resumed."""
        self.root = self.root or os.path.join(
            tempfile.gettempdir(), f"microbench-staging-{os.getuid()}"
        )
        digest = hashlib.sha1(url.rstrip("/").encode()).hexdigest()[:10]
        return os.path.join(self.root, digest, Path(url.rstrip("/")).name)

    def file(self, url: str, key: str) -> str:
        """A local file standing for `url` (and for its .jsonl twin), fetched when it exists."""
        local = self._local(url)
        if local in self.files:
            return local
        fs = filesystem(url, key)
        os.makedirs(os.path.dirname(local), exist_ok=True, mode=0o700)
        # a killed run's rows, never copied: newer than the remote file
        left = os.path.exists(local)
        for remote, here in ((url, local), (twin(url), twin(local))):
            self.files[here] = remote
            if not left and _exists(fs, remote, key):
                fs.get_file(remote, here)
        if left:
            print(f"note: {url}: continuing from the rows a stopped run left in {local}")
        else:
            print(f"note: rows for {url} go to {local} first, copied there when the run ends")
        return local

    def directory(self, url: str, key: str) -> str:
        local = self._local(url)
        if local not in self.dirs:
            filesystem(url, key)
            os.makedirs(local, exist_ok=True)
            self.dirs[local] = url
        return local

    def stage(self, cases: list[Case]) -> list[Case]:
        """The cases with every URL output replaced by its local stand-in."""
        makers = {"csv_path": self.file, **dict.fromkeys(DIR_FIELDS, self.directory)}
        staged = []
        for case in cases:
            urls = {name: url for name in makers if is_url(url := getattr(case.outputs, name))}
            moved = dataclasses.replace(
                case.outputs, **{name: makers[name](url, name) for name, url in urls.items()}
            )
            staged.append(dataclasses.replace(case, outputs=moved) if urls else case)
        return staged

    def upload(self) -> list[str]:
        """Copy every staged file to its URL, then remove the staged copies; returns the URLs written."""
        written = []
        for local, url in self.files.items():
            if os.path.exists(local):
                try:
                    fs = filesystem(url, url)
                    fs.makedirs(url.rsplit("/", 1)[0], exist_ok=True)  # a folder a bucket needs not
                    fs.put_file(local, url)
                except Exception as error:  # any fsspec backend's failure: the rows are safe here
                    raise UploadFailed(
                        f"could not copy the results to {url} ({type(error).__name__}: "
                        f"{str(error)[:200]}); they are kept in {local}"
                    ) from None
                written.append(url)
        for local, url in self.dirs.items():
            fs = filesystem(url, url)
            for folder, _, names in os.walk(local):
                for name in names:
                    path = os.path.join(folder, name)
                    target = url.rstrip("/") + "/" + os.path.relpath(path, local)
                    fs.makedirs(target.rsplit("/", 1)[0], exist_ok=True)
                    fs.put_file(path, target)
                    written.append(target)
        for local in [*self.files, *self.dirs]:
            if os.path.isdir(local):
                shutil.rmtree(local, ignore_errors=True)
            elif os.path.exists(local):
                os.unlink(local)
        return written


class UploadFailed(UserError):
    """The run finished but its outputs did not reach their URL (exit 1; the staged copy is kept)."""

    exit_code = 1
    word_limit = 4096  # the staged path is the user's way to the rows: never cut


def _exists(fs: Any, url: str, key: str) -> bool:
    """Whether the remote file exists; a network that does not answer is one line, not a traceback."""
    try:
        return bool(fs.exists(url))
    except Exception as error:
        raise UserError(
            f"cannot reach {url.split('/')[0]}//{url.split('/')[2] if url.count('/') > 1 else ''} "
            f"({type(error).__name__}: {str(error)[:150]})",
            key=key,
        ) from None


def twin(path: str) -> str:
    """The .jsonl beside a results file (results.writer's rule), of a URL or a local path."""
    return os.path.splitext(path)[0] + ".jsonl"


STORE_FILES = ("*.run.json", "*.csv", "*.jsonl")  # what a published store holds of each run


def local(ref: str, key: str) -> str:
    """A path or URL read as a local path: any URL but file:// has its file (and .jsonl twin) or folder
    of runs copied into a temporary folder first, removed when the process ends."""
    if not is_url(ref):
        return ref
    import fsspec

    try:
        fs, root = fsspec.core.url_to_fs(ref)
        if isinstance(fs, fsspec.implementations.local.LocalFileSystem):
            return str(root)
        folder = fs.isdir(root)
        names = (
            [n for pattern in STORE_FILES for n in fs.glob(f"{root.rstrip('/')}/**/{pattern}")]
            if folder
            else [root, *fs.glob(twin(root))]
        )
        here = tempfile.mkdtemp(prefix="microbench-read-")
        atexit.register(shutil.rmtree, here, True)
        for name in names:
            target = os.path.normpath(
                os.path.join(here, os.path.relpath(name, root if folder else Path(root).parent))
            )
            if os.path.commonpath([here, target]) != here:  # a name with `..` in it: not ours
                continue
            os.makedirs(os.path.dirname(target), exist_ok=True)
            fs.get_file(name, target)
    except Exception as error:  # any fsspec backend's failure (a network, a refusal): one line
        raise UserError(
            f"cannot read it ({type(error).__name__}: {str(error)[:150]})", key=key
        ) from None
    return here if folder else os.path.join(here, Path(root).name)


def publish(record: str, files: list[str], url: str) -> list[str]:
    """A stored run's files and record uploaded into `url/<run id>/`, so no run replaces another."""
    with open(record, encoding="utf-8") as f:
        body = json.load(f)
    target = f"{url.rstrip('/')}/{portable_name(str(body.get('run_id') or Path(record).stem))}"
    fs = filesystem(url, "--to")
    sent = [p for f in files for p in (f, twin(f)) if os.path.isfile(p)]
    published = {**body, "files": [Path(f).name for f in files], "published": url}
    try:
        fs.makedirs(target, exist_ok=True)
        for path in sent:
            fs.put_file(path, f"{target}/{Path(path).name}")
        with fs.open(f"{target}/{Path(record).name}", "w") as out:
            json.dump(published, out, indent=1)
    except Exception as error:  # any fsspec backend's failure: one line; the run stays here
        said = f"{type(error).__name__}: {str(error)[:200]}"
        raise UploadFailed(f"could not publish to {target} ({said})") from None
    return [f"{target}/{Path(p).name}" for p in (*sent, record)]
