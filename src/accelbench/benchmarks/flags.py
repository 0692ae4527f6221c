"""The flags the jax-bench dialect reads, declared once: `microbench run` and the `jax-bench` command
line both take them from here (the TPUMS dialect, planned through this one, shares XPROF_DIR)."""

from __future__ import annotations

from accelbench.core.flags import Flag

# Under whose conditions a jax-bench file is measured (the `conditions` key, `--conditions`).
CONDITIONS_CHOICES = ("upstream", "strict")

HW: Flag[str | None] = Flag(
    "--hw",
    "jax-bench configs: a hardware preset (ironwood, gfc) where an entry names no system",
    None,
    metavar="SYSTEM",
)
XPROF_DIR: Flag[str | None] = Flag(
    "--xprof_dir",
    "jax-bench and TPUMS configs: where traces go where an entry sets xprof_timing and no "
    "xprof_dir (under jax-bench --run: trace there)",
    None,
    aliases=("--xprof-dir",),
)
CONDITIONS: Flag[str | None] = Flag(
    "--conditions",
    "jax-bench configs: upstream (their default: warm caches, every device as jax-bench places the "
    "work) or strict (cold caches, one device)",
    None,
    choices=CONDITIONS_CHOICES,
)
# set by the upstream command lines (`jax-bench`, `tpums`): summary.csv and detailed.json under
# upstream's own names in the output folder
UPSTREAM_FILES: Flag[bool] = Flag(
    "--upstream-files",
    "summary.csv and detailed.json by upstream's names",
    False,
    switch=True,
    commands=(),
)
STRICT_LAYOUT: Flag[bool] = Flag(
    "--strict-layout",
    "TPUMS files: refuse the layouts only an earlier TPUMS loader read (fields flat in "
    "benchmark:, xprof_timing under params:), as its newest loader does",
    False,
    switch=True,
    commands=("run", "validate"),
)
