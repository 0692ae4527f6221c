"""Every shipped config plans to the cases it planned before (ids, labels, order, files): structural
changes leave what a user runs, and what `--resume` finds, as it was."""

import json

import plan_snapshot


def test_every_shipped_config_plans_as_recorded():
    recorded = json.loads(plan_snapshot.GOLDEN.read_text())
    now = plan_snapshot.snapshot()
    assert sorted(now) == sorted(recorded), "a config was added or removed: regenerate the file"
    changed = {path: (recorded[path], now[path]) for path in now if now[path] != recorded[path]}
    assert not changed, (
        f"{len(changed)} configs plan differently, e.g. {next(iter(changed.items()))}"
    )
