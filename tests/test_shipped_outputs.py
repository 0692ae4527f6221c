"""Every shipped config's cases write what they wrote before (every output's columns, values and
order, for the same made-up measurement on a TPU7x and an H100): structural changes leave what a
user's files hold, and what the reference harnesses' readers find there, as it was."""

import json

import output_snapshot


def test_every_shipped_config_writes_as_recorded():
    recorded = json.loads(output_snapshot.GOLDEN.read_text())
    now = output_snapshot.snapshot()
    assert sorted(now) == sorted(recorded), "a config was added or removed: regenerate the file"
    changed = {path: (recorded[path], now[path]) for path in now if now[path] != recorded[path]}
    assert not changed, (
        f"{len(changed)} configs write differently, e.g. {next(iter(changed.items()))}"
    )
