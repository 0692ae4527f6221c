"""The reference's third generation (TPUMS) names, each on the jax-bench benchmark that runs it here.

TPUMS renamed jax-bench's benchmarks (`gemm_generalized` -> `gemm`, `hbm_bandwidth` -> `hbm`), moved
some defaults and fields (gemm's `in_dtype` is bfloat16; hbm's `size` is `num_elements`) and added
fields this project does not act on yet (the DCN layout). A `Tpums` entry says which jax-bench entry
(dialects/jax_bench) a name runs on and how its fields differ; every field is otherwise that entry's
declaration, so models, translation to our ops and upstream's conditions are the jax-bench ones.
../shared/reference/UPSTREAM_TPUMS.md sections 3 and 10 are the source of every fact here.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Literal

from accelbench.catalogue import PARAM_KINDS, Param
from accelbench.dialects.jax_bench.benchmarks import BASE_FIELDS, V2, V2Benchmark
from accelbench.errors import UserError, did_you_mean
from accelbench.registry import register_once

Tier = Literal["production", "experimental", "alias"]
ALIAS: Tier = "alias"  # an earlier name of another entry
EXPERIMENTAL: Tier = "experimental"  # listed with --experimental; its runs say so


Roofline = Literal["none", "compute", "memory_hbm"]
Rate = Literal["tflops", "bandwidth"]  # what a row's console table reports per domain

# TPUMS's enum fields: canonical lowercase values only, in files and on the command line (any other
# spelling is refused with its "Invalid <field> '<value>'" text); an entry adds its own (d2d's direction)
ENUMS: dict[str, tuple[str, ...]] = {
    "reduce_op": ("sum", "mean", "max", "min"),
    "op_type": ("copy", "scale", "add", "triad", "read", "write"),
    "mode": ("fwd", "bwd"),
}
# TPUMS's stated least values where they are not a problem size's 1 (its field metadata `min`)
MINIMUMS: dict[str, float] = {
    "warmup_tries": 0,
    "num_runs": 0,
    "min_duration_s": 0.0,
    "seed": 0,
    "samples_per_run": 1,
}
# fields a console table leaves out: how the case is run, not what it measures
UNSHOWN = ("warmup_tries", "num_runs", "min_duration_s", "seed", "samples_per_run")


def tpums_field(param: Param, enums: dict[str, tuple[str, ...]]) -> Param:
    """A field with TPUMS's rules: its enum values, and its least value (a size's is 1)."""
    if param.name in enums:
        param = replace(param, kind="enum", choices=enums[param.name])
    sized = PARAM_KINDS[param.kind].sizes_problem
    return replace(param, minimum=MINIMUMS.get(param.name, 1 if sized else None))


@dataclass(frozen=True)
class Tpums:
    name: str
    v2: str  # the jax-bench benchmark it runs on
    tier: Tier = "production"
    roofline: Roofline = "none"  # which roofline fields its rows carry
    soak: bool = False  # timed as TPUMS's soak in phases (samples_per_run: the run's soak_chunk)
    renamed: dict[str, str] = field(default_factory=dict)  # TPUMS field -> the jax-bench field
    # TPUMS spellings accepted for one of its fields (hbm's `size`, the older name of num_elements)
    aliases: dict[str, str] = field(default_factory=dict)
    defaults: dict[str, object] = field(default_factory=dict)  # TPUMS's default where it moved
    # TPUMS fields accepted and recorded, with no effect here yet (and why)
    inert: tuple[Param, ...] = ()
    dropped: tuple[str, ...] = ()  # jax-bench fields TPUMS's config does not have
    # per-chip bandwidth derived from per-device (TPUMS's derive_chip_bandwidth; transfers opt out)
    chip_bandwidth: bool = True
    config: str = ""  # TPUMS's Config class (its help group's title); else from the class name
    rate: Rate = "bandwidth"
    size_column: str | None = None  # the console table's size or work column, after the fields
    enums: dict[str, tuple[str, ...]] = field(default_factory=dict)
    device_matrix: bool = False  # its console report adds the source-by-destination GB/s matrix

    @property
    def config_name(self) -> str:
        return self.config or self.bench.class_name.removesuffix("Benchmark") + "Params"

    @property
    def report_columns(self) -> tuple[tuple[str, str], ...]:
        """The console table (TPUMS's REPORT_SCHEMA): the fields that say what was measured, the
        size column, then each domain's p50 and rate (per chip where the benchmark has one)."""
        inert = {p.name for p in self.inert}
        shown = [(p.name, "str") for p in self.fields if p.name not in (*UNSHOWN, *inert)]
        size = [(self.size_column, "2f")] if self.size_column else []
        scope = "per_chip" if self.chip_bandwidth or self.rate == "tflops" else "per_device"
        rate = f"tflops_{scope}" if self.rate == "tflops" else f"bandwidth_{scope}_gb_s"
        timed = [(f"{d}_{c}", f) for d in DOMAINS for c, f in (("p50_ms", "4f"), (rate, "2f"))]
        return (*shown, *size, *timed)

    @property
    def is_experimental(self) -> bool:
        return self.tier == EXPERIMENTAL

    @property
    def is_alias(self) -> bool:
        """An earlier name of another entry (listed with --aliases, refused by `benchmark run`)."""
        return self.tier == ALIAS

    @property
    def bench(self) -> V2Benchmark:
        return V2[self.v2]

    @property
    def fields(self) -> tuple[Param, ...]:
        """Its fields in TPUMS's names and defaults: the jax-bench entry's (no xprof or roofline
        fields: TPUMS sets those per run), then the inert ones."""
        back = {v: k for k, v in self.renamed.items()}
        out = []
        for p in self.bench.all_fields:
            if p.name in RUN_LEVEL or p.name in self.dropped:
                continue
            name = back.get(p.name, p.name)
            aliases = tuple(a for a, target in self.aliases.items() if target == name)
            default = self.defaults.get(name, p.default)
            out.append(replace(p, name=name, default=default, aliases=p.aliases + aliases))
        enums = {**ENUMS, **self.enums}
        every = (*out, *((SAMPLES_PER_RUN,) if self.soak else ()), *self.inert)
        return tuple(tpums_field(p, enums) for p in every)

    def from_v2(self, fields: dict[str, object]) -> dict[str, object]:
        """A case's jax-bench fields in TPUMS's names, less the run-level ones."""
        back = {v: k for k, v in self.renamed.items()}
        gone = (*RUN_LEVEL, *self.dropped)
        return {back.get(k, k): v for k, v in fields.items() if k not in gone}

    @property
    def moved(self) -> dict[str, object]:
        """TPUMS's own defaults where they moved from jax-bench's, as checked values (in its names)."""
        return {p.name: p.default_value for p in self.fields if p.name in self.defaults}

    def to_v2(self, fields: dict[str, object]) -> dict[str, object]:
        """Checked TPUMS fields as the jax-bench entry's (renamed; inert ones left out)."""
        inert = {p.name for p in self.inert}
        renamed = {**self.renamed, SAMPLES_PER_RUN.name: "soak_chunk"}
        return {renamed.get(k, k): v for k, v in fields.items() if k not in inert}


DOMAINS = ("wall_clock", "xprof")  # TPUMS's timing domains, in its column order
SAMPLES_PER_RUN = Param(
    "samples_per_run", "int", 25, doc="iterations per traced window and per untraced soak chunk"
)

# jax-bench fields that are run-level in TPUMS (`xprof_timing` in the file, the rest gone)
RUN_LEVEL = ("xprof_timing", "xprof_dir", "system", "use_trace_roofline", "hardware_stats")
BASE_NAMES = tuple(p.name for p in BASE_FIELDS if p.name not in RUN_LEVEL)

TPUMS: dict[str, Tpums] = {}


def register_tpums(entry: Tpums) -> Tpums:
    if entry.v2 not in V2:
        raise ValueError(f"TPUMS {entry.name}: no jax-bench benchmark {entry.v2}")
    return register_once(TPUMS, entry.name, entry, "TPUMS benchmark")


def listed(tiers: tuple[Tier, ...] = ("production",)) -> list[str]:
    return [name for name, entry in TPUMS.items() if entry.tier in tiers]


def get_tpums(name: object, where: str) -> Tpums:
    if not isinstance(name, str) or name not in TPUMS:
        raise UserError(
            f"unknown benchmark {name!r} (TPUMS names: {', '.join(listed())})",
            key=where,
            suggestion=did_you_mean(str(name), TPUMS),
        )
    return TPUMS[name]


COLLECTIVE_INERT = (
    Param("xla_dump_dir", "str", None, doc="where upstream reads its replica groups: unused"),
    Param("device_placement", "str", None, doc="e.g. id_sorted: recorded"),
)
# TPUMS's gemm defaults to bf16 (jax-bench's: fp8), and its configs have no dtype beside in_dtype and
# out_dtype
GEMM_MOVED: dict[str, object] = {"in_dtype": "bfloat16"}
NO_DTYPE = ("dtype",)


def _gemm(name: str, tier: Tier = "production", **more: Any) -> Tpums:
    """A GEMM name: TPUMS's bf16 default, compute roofline, TFLOP/s and FLOPs in its table."""
    return Tpums(
        name,
        "gemm_generalized",
        tier,
        defaults=GEMM_MOVED,
        roofline="compute",
        dropped=NO_DTYPE,
        rate="tflops",
        config=more.pop("config", "GemmParams"),
        size_column="total_flops",
        **more,
    )


def _hbm(name: str, tier: Tier = "production") -> Tpums:
    return Tpums(
        name,
        "hbm_bandwidth",
        tier,
        renamed={"num_elements": "size"},
        aliases={"size": "num_elements"},
        roofline="memory_hbm",
        config="HBMBandwidthParams",
        size_column="total_bytes_mib",
    )


def _collective(name: str, v2: str, tier: Tier = "production", config: str = "") -> Tpums:
    return Tpums(
        name, v2, tier, inert=COLLECTIVE_INERT, size_column="shard_size_mib", config=config
    )


def _transfer(name: str) -> Tpums:
    """Host-device copies: GB/s per device only (TPUMS derives no per-chip figure for them)."""
    return Tpums(name, name, chip_bandwidth=False, config="HostDeviceParams")


for _entry in (
    _gemm("gemm"),
    _hbm("hbm"),
    _transfer("host_to_device"),
    _transfer("device_to_host"),
    Tpums(
        "device_to_device",
        "device_to_device",
        chip_bandwidth=False,
        config="DeviceToDeviceParams",
        enums={"direction": ("uni", "bi")},
        device_matrix=True,
    ),
    _collective("all_gather", "all_gather", config="CollectivesParams"),
    _collective("all_reduce", "all_reduce", config="AllReduceParams"),
    _collective("all_to_all", "all_to_all", config="CollectivesParams"),
    _collective("reduce_scatter", "reduce_scatter", "experimental"),
    _gemm("gemm_throttling", "experimental", soak=True, config="GemmThrottlingParams"),
    _collective("ppermute", "ppermute", "experimental"),
    Tpums("ppermute_uni", "ppermute", "experimental", defaults={"direction": "uni"}),
    Tpums("ppermute_bidi", "ppermute", "experimental", defaults={"direction": "bidi"}),
    Tpums("attention_flashed", "attention_flashed", "experimental", rate="tflops"),
    Tpums("transformer_layer_moe", "transformer_layer_moe", "experimental", rate="tflops"),
    *(
        Tpums(name, name, "experimental")
        for name in ("rmsnorm", "swiglu", "sigmoid", "simple_add", "quantization", "rope")
    ),
    # the earlier names, still used by shipped files
    _gemm("gemm_generalized", "alias"),
    _hbm("hbm_bandwidth", "alias"),
):
    register_tpums(_entry)
