"""A state's hash is the hash of its canonical JSON text, whichever encoder writes it.

`hashed_text` writes a state with orjson where that gives canonical's text, and with json
otherwise (engine/run/state.py). Every log's state hashes depend on it: a difference here
would make old logs fail their replay check.
"""
from __future__ import annotations

import hashlib
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import engine.run.state as state_mod
from engine.run.state import canonical, hashed_text, state_hash

TEXTS = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12)  # any character but a lone surrogate
SCALARS = (st.none() | st.booleans() | st.integers() | st.integers(min_value=-(2**70), max_value=2**70) | TEXTS
           | st.floats(allow_nan=False, allow_infinity=False))
VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=5) | st.dictionaries(TEXTS, inner, max_size=5),
                      max_leaves=40)
ENCODERS = ["orjson", "json"]


@pytest.fixture(params=ENCODERS)
def encoder(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "json":
        monkeypatch.setattr(state_mod, "_fast_dumps", None)
    elif state_mod._fast_dumps is None:  # pragma: no cover - orjson is a dependency
        pytest.skip("orjson is not installed")
    return request.param


@settings(max_examples=400, deadline=None)
@given(value=VALUES)
def test_the_hashed_text_is_the_canonical_text(value: object) -> None:
    expected = canonical(value).encode()
    assert hashed_text(value) == expected
    saved = state_mod._fast_dumps
    try:
        state_mod._fast_dumps = None
        assert hashed_text(value) == expected
    finally:
        state_mod._fast_dumps = saved


@pytest.mark.parametrize("value, text", [
    ({"a": 1e-05, "b": 0.1}, b'{"a":1e-05,"b":0.1}'),  # orjson would write 0.00001
    ({"big": 1e16, "n": 5}, b'{"big":1e+16,"n":5}'),
    ({"n": 2**64, "m": -(2**63) - 1}, b'{"n":18446744073709551616,"m":-9223372036854775809}'),  # beyond orjson
    ({"1": [True, None], "t": "a.b e+ \u2028\x7f\x1f\"\\"}, '{"1":[true,null],"t":"a.b e+ \u2028\x7f\\u001f\\"\\\\"}'
     .encode()),
    ({"tiny": 5e-324, "small": 1e-07}, b'{"tiny":5e-324,"small":1e-07}'),  # orjson: 1e-7, no `.`
    ({"n": -3, "t": "one-e-two"}, b'{"n":-3,"t":"one-e-two"}'),
    ([1, (2, 3)], b"[1,[2,3]]"),
])
def test_numbers_and_texts_orjson_writes_otherwise(encoder: str, value: object, text: bytes) -> None:
    assert hashed_text(value) == text == canonical(value).encode()


def test_a_key_that_is_not_a_text_is_written_as_json_writes_it(encoder: str) -> None:
    assert hashed_text({1: "x", "y": 2}) == b'{"1":"x","y":2}'


@pytest.mark.parametrize("bad", [math.inf, -math.inf, math.nan])
def test_nan_and_infinities_hash_as_null_in_either_encoder(encoder: str, bad: float) -> None:
    # No game state holds them (store_value refuses them), but a hash must not depend on the
    # encoder: both write null, also beside a number that makes orjson's text differ.
    assert hashed_text({"x": bad, "l": [bad]}) == b'{"x":null,"l":[null]}'
    assert hashed_text({"x": bad, "f": 0.5}) == b'{"x":null,"f":0.5}'


def test_state_hash_is_the_sha256_of_the_canonical_text(encoder: str) -> None:
    state = {"globals": {"round": 3}, "ent": {"p1": {"hand": ["a", "b"]}}, "rng": 2**64 - 1, "pending": None}
    assert state_hash(state) == hashlib.sha256(canonical(state).encode()).hexdigest()[:16]
