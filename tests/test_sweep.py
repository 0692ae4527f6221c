import pytest

from accelbench.config.expand import expand_range, ironwood_sweep, resolve_same_as, values_of
from accelbench.errors import UserError


def expand_sweep(entry, where):
    return [resolve_same_as(values_of(p), where) for p in ironwood_sweep(entry, where).points()]


def count_sweep(entry, where):
    return ironwood_sweep(entry, where).total


def test_plain_lists_make_a_cartesian_product_in_key_order():
    out = expand_sweep({"m": [1, 2], "n": [3, 4], "dtype": "bfloat16"}, "s")
    assert out == [
        {"m": 1, "n": 3, "dtype": "bfloat16"},
        {"m": 1, "n": 4, "dtype": "bfloat16"},
        {"m": 2, "n": 3, "dtype": "bfloat16"},
        {"m": 2, "n": 4, "dtype": "bfloat16"},
    ]


def test_list_suffix_names_the_parameter_without_suffix():
    assert expand_sweep({"m_list": [8, 16]}, "s") == [{"m": 8}, {"m": 16}]


def test_the_value_type_decides_list_range_or_one_value_whatever_the_suffix():
    """The Ironwood reference's rule (section 2): suffixes are only stripped, `_range` then `_list`."""
    entry = {
        "n": {"start": 256, "end": 768, "increase_by": 256},  # a range without _range
        "mode": ["fwd", "bwd"],  # a list without _list
        "ici_size_range": 128,  # a scalar under _range: one value
        "x_list_range": [1],
    }
    out = expand_sweep(entry, "s")
    assert [d["n"] for d in out] == [256, 256, 512, 512, 768, 768]
    assert [d["mode"] for d in out[:2]] == ["fwd", "bwd"]
    assert all(d["ici_size"] == 128 and d["x"] == 1 for d in out)
    assert count_sweep(entry, "s") == 6


def test_multiplier_range_is_inclusive():
    assert expand_sweep({"m_range": {"start": 1024, "end": 8192, "multiplier": 2}}, "s") == [
        {"m": 1024},
        {"m": 2048},
        {"m": 4096},
        {"m": 8192},
    ]


def test_increase_by_range_is_inclusive_and_stops_before_overshoot():
    assert expand_range({"start": 1, "end": 10, "increase_by": 4}, "r") == [1, 5, 9]
    assert expand_range({"start": 2, "end": 10, "increase_by": 4}, "r") == [2, 6, 10]


def test_same_as_copies_resolved_value_and_follows_chains():
    out = expand_sweep({"m": [64, 128], "k": "SAME_AS_m", "n": "SAME_AS_k"}, "s")
    assert out == [{"m": 64, "k": 64, "n": 64}, {"m": 128, "k": 128, "n": 128}]


def test_count_matches_expansion():
    entry = {"m_range": {"start": 1, "end": 64, "multiplier": 2}, "n": [1, 2, 3], "k": "SAME_AS_m"}
    assert count_sweep(entry, "s") == len(expand_sweep(entry, "s")) == 21


@pytest.mark.parametrize(
    "spec, message",
    [
        ({"start": 1, "end": 8, "multiplier": 1}, "range never ends: multiplier must be > 1"),
        ({"start": 1, "end": 8, "multiplier": 0.5}, "range never ends: multiplier must be > 1"),
        ({"start": 1, "end": 8, "increase_by": 0}, "range never ends: increase_by must be > 0"),
        ({"start": 1, "end": 8, "increase_by": -2}, "range never ends: increase_by must be > 0"),
        ({"start": 9, "end": 8, "increase_by": 1}, "range is empty"),
        ({"start": 1, "end": 8}, "exactly one of 'multiplier' or 'increase_by'"),
        (
            {"start": 1, "end": 8, "multipler": 2},
            "unknown range key 'multipler' (did you mean 'multiplier'?)",
        ),
    ],
)
def test_bad_ranges_are_refused(spec, message):
    with pytest.raises(UserError) as info:
        expand_range(spec, "m_range")
    assert message in str(info.value)


def test_same_as_cycle_and_unknown_target_are_refused():
    with pytest.raises(UserError, match="SAME_AS_ cycle"):
        resolve_same_as({"m": "SAME_AS_k", "k": "SAME_AS_m"}, "s")
    with pytest.raises(UserError, match=r"unknown key 'mm' \(did you mean 'm'\?\)"):
        resolve_same_as({"m": 1, "k": "SAME_AS_mm"}, "s")
