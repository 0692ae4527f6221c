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
from typing import Literal

from microbench.catalogue import Param
from microbench.dialects.jax_bench.benchmarks import BASE_FIELDS, V2, V2Benchmark
from microbench.errors import UserError, did_you_mean
from microbench.registry import register_once

Tier = Literal["production", "experimental", "alias"]
ALIAS: Tier = "alias"  # an earlier name of another entry


Roofline = Literal["none", "compute", "memory_hbm"]


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
        return (*out, *((SAMPLES_PER_RUN,) if self.soak else ()), *self.inert)

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


@dataclass(frozen=True)
class ChipSpec:
    """TPUMS's per-device peaks (src/specs/*.py): TFLOP/s by dtype (a dtype absent uses bfloat16's;
    None: no compute roofline), the chip's HBM bandwidth, and devices (TensorCores) per chip."""

    devices_per_chip: int
    tflops: dict[str, float | None]
    hbm_gb_s_per_chip: float

    def peak_tflops(self, dtype_name: str) -> float | None:
        return self.tflops.get(dtype_name, self.tflops["bfloat16"])

    @property
    def hbm_gb_s_per_device(self) -> float:
        return self.hbm_gb_s_per_chip / self.devices_per_chip


SPECS = {
    "tpu7x": ChipSpec(
        2,
        {
            "bfloat16": 1153.5,
            "float32": 576.75,
            "float8_e4m3fn": 2307.0,
            "float8_e5m2": 2307.0,
            "int8": 1153.5,
            "float4_e2m1fn": None,
        },
        7380.0,
    ),
    "v6e": ChipSpec(
        1,
        {
            "bfloat16": 918.0,
            "float32": 459.0,
            "float8_e4m3fn": 918.0,
            "float8_e5m2": 918.0,
            "int8": 1836.0,
            "int4": 3672.0,
            "float4_e2m1fn": None,
        },
        1638.4,
    ),
}
SPEC_KINDS = {
    "tpu7x": "tpu7x",
    "tpu v7x": "tpu7x",
    "v6e": "v6e",
    "tpu v6e": "v6e",
    "tpu v6 lite": "v6e",
}


def chip_spec(device_kind: str | None) -> ChipSpec | None:
    """The spec of a TPU by its device kind; None on any other device (its peaks are left blank)."""
    return SPECS.get(SPEC_KINDS.get(str(device_kind or "").lower(), ""))


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

for _entry in (
    Tpums("gemm", "gemm_generalized", defaults=GEMM_MOVED, roofline="compute", dropped=NO_DTYPE),
    Tpums(
        "hbm",
        "hbm_bandwidth",
        renamed={"num_elements": "size"},
        aliases={"size": "num_elements"},
        roofline="memory_hbm",
    ),
    Tpums("host_to_device", "host_to_device"),
    Tpums("device_to_host", "device_to_host"),
    Tpums("device_to_device", "device_to_device"),
    Tpums("all_gather", "all_gather", inert=COLLECTIVE_INERT),
    Tpums("all_reduce", "all_reduce", inert=COLLECTIVE_INERT),
    Tpums("all_to_all", "all_to_all", inert=COLLECTIVE_INERT),
    Tpums("reduce_scatter", "reduce_scatter", "experimental", inert=COLLECTIVE_INERT),
    Tpums(
        "gemm_throttling",
        "gemm_generalized",
        "experimental",
        defaults=GEMM_MOVED,
        roofline="compute",
        soak=True,
        dropped=NO_DTYPE,
    ),
    Tpums("ppermute", "ppermute", "experimental", inert=COLLECTIVE_INERT),
    Tpums("ppermute_uni", "ppermute", "experimental", defaults={"direction": "uni"}),
    Tpums("ppermute_bidi", "ppermute", "experimental", defaults={"direction": "bidi"}),
    Tpums("attention_flashed", "attention_flashed", "experimental"),
    Tpums("transformer_layer_moe", "transformer_layer_moe", "experimental"),
    *(
        Tpums(name, name, "experimental")
        for name in ("rmsnorm", "swiglu", "sigmoid", "simple_add", "quantization", "rope")
    ),
    # the earlier names, still used by shipped files
    Tpums(
        "gemm_generalized",
        "gemm_generalized",
        "alias",
        defaults=GEMM_MOVED,
        roofline="compute",
        dropped=NO_DTYPE,
    ),
    Tpums(
        "hbm_bandwidth",
        "hbm_bandwidth",
        "alias",
        renamed={"num_elements": "size"},
        aliases={"size": "num_elements"},
        roofline="memory_hbm",
    ),
):
    register_tpums(_entry)
