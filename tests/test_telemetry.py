"""TPU firmware telemetry read from synthetic device planes (the shapes jax.profiler.ProfileData
gives: planes with stats and lines of events), by hand: peaks, throttle shares and means over the
XLA Ops window, power, p-states, and the aggregate over devices."""

from dataclasses import dataclass, field

import pytest

from accelbench.jax_backend import telemetry


@dataclass
class Ev:
    name: str
    start_ns: float
    duration_ns: float
    stats: list = field(default_factory=list)


@dataclass
class Line:
    name: str
    events: list


@dataclass
class Plane:
    name: str
    lines: list
    stats: list = field(default_factory=list)


def value(v):
    return [("performance_counter_id", 7), ("value", v)]  # the counter id is not the value


def device(n, throttle_at=50.0, temp=80.0):
    """An XLA Ops window of 0..100 ns; HBM throttled (5%) over 50..100; core power 100 W then
    200 W; p-state 7 before the window, 7 then 5 inside it."""
    return Plane(
        f"/device:TPU:{n}",
        [
            Line("XLA Ops", [Ev("fusion", 0, 60), Ev("fusion.1", 60, 40)]),
            Line(
                "Firmware",
                [
                    Ev("HBM FW Throttle(%) 3", 0, throttle_at, value(0.0)),
                    Ev("HBM FW Throttle(%) 3", throttle_at, 100 - throttle_at, value(5.0)),
                    Ev("VDD Core FW Power Meter PL1(W)", 0, 50, value(100.0)),
                    Ev("VDD Core FW Power Meter PL1(W)", 50, 50, value(200.0)),
                    Ev("HBM FW Power Meter PL1(W)", 0, 100, value(30.0)),
                    Ev("P State", -20, 20, value(7)),
                    Ev("P State", 10, 40, value(7)),
                    Ev("P State", 50, 50, value(5)),
                    Ev("Compute Die FW Max Temperature(C)", 0, 1, value(temp)),
                    Ev("something else", 0, 1, value(1.0)),
                ],
            ),
        ],
        stats=[("HBM FW Max Temperature(C)", 70.0)],
    )


def test_one_devices_figures_by_hand():
    (got,) = telemetry.per_device([device(0), Plane("/host:CPU", [])]).values()
    assert got["hbm_throttle_time_pct"] == pytest.approx(50.0)
    assert got["hbm_throttle_mean_pct"] == pytest.approx(2.5)
    assert got["vdd_core_power_mean_w"] == pytest.approx(150.0)
    assert got["total_power_mean_w"] == pytest.approx(180.0)
    assert (got["pstate_min"], got["pstate_max"], got["pstate_changes"]) == (5.0, 7.0, 1)
    assert got["peak_temp_c"] == 80.0 and got["hbm_peak_temp_c"] == 70.0
    assert got["peak_temp_source"] == "compute_die"
    assert got["vdd_core_throttle_time_pct"] is None  # no such series: blank, never 0


def test_devices_aggregate_by_their_worst():
    devices = telemetry.per_device([device(0, throttle_at=50.0), device(1, 20.0, temp=85.0)])
    got = telemetry.aggregate(devices)
    assert got["hbm_throttle_time_pct"] == pytest.approx(80.0)  # device 1 throttled 80%
    assert got["peak_temp_c"] == 85.0 and got["pstate_min"] == 5.0
    assert set(got) == set(telemetry.KEYS)


def test_no_tpu_planes_give_blank_figures():
    got = telemetry.aggregate(telemetry.per_device([Plane("/device:GPU:0", [])]))
    assert all(v is None for v in got.values())


def test_a_soak_row_carries_the_worst_windows_telemetry_and_the_peaks_before_it():
    from accelbench.core.types import SoakPhases, Timing
    from accelbench.results.records import Series
    from accelbench.results.row_builder import _telemetry

    before = {"peak_temp_c": 60.0, "hbm_peak_temp_c": 55.0, "pstate_min": 7}
    t = Timing(samples_s=[1.0], source="xprof_tpu", telemetry={"peak_temp_c": 85.0})
    t.soak = SoakPhases([1.0], [1.0], before)
    got = _telemetry(t)
    assert got == {
        "peak_temp_c": 85.0,
        "peak_temp_c_pre_soaking": 60.0,
        "hbm_peak_temp_c_pre_soaking": 55.0,
    }
    assert Series.from_json({"telemetry": got}).telemetry == got  # kept in the JSON lines
    assert _telemetry(Timing(samples_s=[1.0], source="xprof_gpu")) == {}  # no TPU: nothing


def test_a_soaks_traces_ask_for_the_firmwares_events():
    from accelbench.jax_backend.timers import FIRMWARE_EVENTS, profile_options

    options = profile_options(firmware=True)
    assert dict(options.advanced_configuration) == FIRMWARE_EVENTS
    assert not dict(getattr(profile_options(), "advanced_configuration", {}) or {})


def test_a_gpu_soak_fills_the_columns_nvml_has_an_equivalent_for():
    from accelbench.dialects.tpums.metrics import nvml_telemetry

    samples = [[0.0, 1980, 2619, 40.0, 300.0], [1.0, 1755, 2619, 62.0, 700.0]]
    assert nvml_telemetry(samples) == {
        "peak_temp_c": 62.0,
        "peak_temp_source": "gpu_die",
        "total_power_mean_w": 500.0,
        "peak_temp_c_pre_soaking": 40.0,
    }
    assert nvml_telemetry([]) == {}


def test_real_profile_data_planes_are_read_the_same_way():
    """jax.profiler.ProfileData from a text proto: plane statistics, event statistics by their
    metadata names, a performance counter id passed over for the value."""
    from jax.profiler import ProfileData

    profile = ProfileData.from_text_proto("""
planes {
  id: 1 name: "/device:TPU:0"
  lines { id: 1 name: "XLA Ops" timestamp_ns: 0
    events { metadata_id: 3 offset_ps: 0 duration_ps: 100000 } }
  lines { id: 2 name: "Firmware" timestamp_ns: 0
    events { metadata_id: 1 offset_ps: 0 duration_ps: 50000
      stats { metadata_id: 2 int64_value: 7 } stats { metadata_id: 1 double_value: 0.0 } }
    events { metadata_id: 1 offset_ps: 50000 duration_ps: 50000
      stats { metadata_id: 1 double_value: 5.0 } } }
  stats { metadata_id: 3 double_value: 71.5 }
  event_metadata { key: 1 value { id: 1 name: "HBM FW Throttle(%) 2" } }
  event_metadata { key: 3 value { id: 3 name: "fusion" } }
  stat_metadata { key: 1 value { id: 1 name: "value" } }
  stat_metadata { key: 2 value { id: 2 name: "performance_counter_id" } }
  stat_metadata { key: 3 value { id: 3 name: "HBM FW Max Temperature(C)" } }
}""")
    (got,) = telemetry.per_device(profile.planes).values()
    assert got["hbm_peak_temp_c"] == 71.5 and got["peak_temp_source"] == "hbm"
    assert got["hbm_throttle_time_pct"] == pytest.approx(50.0)
    assert got["hbm_throttle_mean_pct"] == pytest.approx(2.5)


def packed(v, key=b""):
    """A double as a TPU's firmware may give it: 8 little-endian bytes, after a field key or not."""
    import struct

    return key + struct.pack("<d", v)


def upstream_plane(n=0):
    """A plane giving upstream's test values (tests/test_executor.py @286dfeb9, whose trace file is not
    published): HBM 68.5 C, compute die 74.2 C (packed, not UTF-8), HBM throttle readings up to
    64.1 %, Power Throttle levels 0 and 12 (THERMAL_THROTTLE), a higher voltage-droop level and a bare
    nonzero level, neither of which counts."""
    return Plane(
        f"/device:TPU:{n}",
        [
            Line("XLA Ops", [Ev("fusion", 0, 100)]),
            Line(
                "Power Throttle",
                [
                    Ev("0", 0, 10),
                    Ev("12 (THERMAL_THROTTLE)", 10, 20),
                    Ev("20 (LDIDT_DROOP_THROTTLE)", 30, 10),
                    Ev("7", 40, 10),
                ],
            ),
            Line(
                "Firmware",
                [
                    Ev("HBM FW Throttle(%)", 0, 50, value(12.0)),
                    Ev("HBM FW Throttle(%)", 50, 50, [("value", packed(64.1).decode())]),
                    Ev("Compute Die FW Max Temperature(C)", 0, 1, [("", packed(74.2, b"\x09"))]),
                ],
            ),
        ],
        stats=[("HBM FW Max Temperature(C)", 68.5)],
    )


def test_upstreams_four_keys_from_its_test_values():
    got = telemetry.aggregate(telemetry.per_device([upstream_plane(0), upstream_plane(1)]))
    assert {k: got[k] for k in telemetry.TELEMETRY_MAXIMA} == {
        "thermal_throttle_level": 12.0,
        "hbm_peak_temp_c": 68.5,
        "peak_temp_c": pytest.approx(74.2),
        "hbm_throttle_pct": pytest.approx(64.1),
    }


@pytest.mark.parametrize(
    ("name", "level"),
    [
        ("0", 0.0),
        ("12 (THERMAL_THROTTLE)", 12.0),
        ("3.5 ( thermal_throttle )", 3.5),
        ("8 (LDIDT_DROOP_THROTTLE)", None),
        ("7", None),
        ("fusion", None),
    ],
)
def test_a_power_throttle_event_counts_its_thermal_level_only(name, level):
    assert telemetry.thermal_level(name) == level


def test_peak_temp_falls_back_to_the_hbm_only_where_no_die_reported():
    die = Plane("/device:TPU:0", [], stats=[("Compute Die FW Max Temperature(C)", 70.0)])
    hbm = Plane("/device:TPU:1", [], stats=[("HBM FW Max Temperature(C)", 80.0)])
    (alone,) = telemetry.per_device([hbm]).values()
    assert alone["peak_temp_c"] == 80.0 and alone["peak_temp_source"] == "hbm"
    got = telemetry.aggregate(telemetry.per_device([die, hbm]))
    assert got["peak_temp_c"] == 70.0 and got["peak_temp_source"] == "compute_die"


@pytest.mark.parametrize(
    ("raw", "read"),
    [
        (packed(64.1), 64.1),
        (packed(64.1, b"\x0a\x09"), 64.1),  # a message ending in a 64-bit field
        (packed(64.1, b"\x0a\x08"), None),  # the key before the 8 bytes is not a 64-bit field's
        (packed(float("inf")), None),
        (b"\x01\x02", None),
        ("celsius!", None),  # a string statistic is never a number
    ],
)
def test_packed_doubles(raw, read):
    got = telemetry._number(raw)
    assert got == (pytest.approx(read) if read is not None else None)


def test_packed_doubles_through_profile_data_valid_utf8_or_not():
    """ProfileData hands a UTF-8 packed double over as text and raises mid-statistic on one that is
    not UTF-8: both events' values are read."""
    from jax.profiler import ProfileData

    def octal(raw):
        return "".join(f"\\{b:03o}" for b in raw)

    events = "".join(
        f"""events {{ metadata_id: 1 offset_ps: {i * 50000} duration_ps: 50000
          stats {{ metadata_id: 2 int64_value: 7 }} stats {{ metadata_id: 1 bytes_value: "{octal(packed(v, key))}" }} }}"""
        for i, (v, key) in enumerate([(64.1, b""), (71.3, b"\x09")])
    )
    profile = ProfileData.from_text_proto(f"""
planes {{ id: 1 name: "/device:TPU:0"
  lines {{ id: 1 name: "Firmware" timestamp_ns: 0 {events} }}
  event_metadata {{ key: 1 value {{ id: 1 name: "HBM FW Throttle(%)" }} }}
  stat_metadata {{ key: 1 value {{ id: 1 name: "value" }} }}
  stat_metadata {{ key: 2 value {{ id: 2 name: "performance_counter_id" }} }}
}}""")
    (got,) = telemetry.per_device(profile.planes).values()
    assert got["hbm_throttle_pct"] == pytest.approx(71.3)
    assert got["hbm_throttle_mean_pct"] == pytest.approx((64.1 + 71.3) / 2)


def test_each_window_gets_the_thermal_level_it_ran_under():
    metrics, levels = telemetry.read([upstream_plane()], [(0, 10), (5, 15), (30, 50), (90, 99)])
    assert levels == [0.0, 12.0, 0.0, 0.0] and metrics["thermal_throttle_level"] == 12.0
    assert telemetry.read([device(0)], [(0, 10)])[1] == []  # no Power Throttle line: not recorded


def test_traces_of_one_case_merge_upstreams_maxima():
    from accelbench.core.types import Timing, merged_telemetry

    baseline = {"peak_temp_c": 90.0, "thermal_throttle_level": 3.0, "pstate_min": 7}
    worst = {"peak_temp_c": 80.0, "thermal_throttle_level": None, "pstate_min": 5}
    assert merged_telemetry(baseline, worst) == {
        "peak_temp_c": 90.0,
        "thermal_throttle_level": 3.0,
        "pstate_min": 5,
        "hbm_peak_temp_c": None,
        "hbm_throttle_pct": None,
    }
    rounds = Timing([1.0], "xprof_tpu", telemetry=worst, thermal_levels=[0.0])
    rounds.extend(Timing([1.0], "xprof_tpu", telemetry=baseline, thermal_levels=[3.0]))
    assert rounds.telemetry["peak_temp_c"] == 90.0 and rounds.thermal_levels == [0.0, 3.0]


def test_a_tpu_timings_samples_get_the_levels_of_their_own_executions():
    """The xprof timer's TPU path: each module execution on `XLA Modules` is its sample's window."""
    from jax.profiler import ProfileData

    from accelbench.core.case import Case, Outputs, RunSettings
    from accelbench.core.types import Timing
    from accelbench.jax_backend import timers

    profile = ProfileData.from_text_proto("""
planes { id: 1 name: "/device:TPU:0"
  lines { id: 1 name: "XLA Modules" timestamp_ns: 0
    events { metadata_id: 1 offset_ps: 0 duration_ps: 40000 }
    events { metadata_id: 1 offset_ps: 50000 duration_ps: 40000 } }
  lines { id: 2 name: "Power Throttle" timestamp_ns: 0
    events { metadata_id: 2 offset_ps: 0 duration_ps: 60000 }
    events { metadata_id: 3 offset_ps: 60000 duration_ps: 10000 } }
  event_metadata { key: 1 value { id: 1 name: "jit_mb_add" } }
  event_metadata { key: 2 value { id: 2 name: "0" } }
  event_metadata { key: 3 value { id: 3 name: "5 (THERMAL_THROTTLE)" } }
}""")
    case = Case("add", "jax", {}, RunSettings(), Outputs("x.csv"), "add")
    timing = Timing([40e-9, 40e-9], "xprof_tpu")
    timers._firmware(case, profile, 2, timing)
    assert timing.thermal_levels == [0.0, 5.0] and timing.telemetry["thermal_throttle_level"] == 5
