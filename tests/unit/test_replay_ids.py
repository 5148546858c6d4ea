"""Request shapes for replay matching: volatile ids are variables, defaults are absent."""

from __future__ import annotations

from recorder.replay._ids import differences, pairs, shape_key

PY_SEND = {"message": {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "echo hello"}]}}
# The JS SDK's client spells out what the py client leaves out (observed, @a2a-js/sdk 1.3.0).
JS_SEND = {"message": {"messageId": "m-2", "role": "ROLE_USER", "metadata": {},
                       "parts": [{"text": "echo hello", "mediaType": "text/plain",
                                  "metadata": {}}]},
           "metadata": {}}


def test_spelled_out_defaults_match_left_out_ones() -> None:
    assert shape_key(JS_SEND) == shape_key(PY_SEND)
    assert differences(JS_SEND, PY_SEND) == []
    assert list(pairs(JS_SEND, PY_SEND)) == [("m-2", "m-1")]


def test_a_media_type_other_than_the_default_still_differs() -> None:
    png = {"message": {**PY_SEND["message"], "parts": [{"text": "x", "mediaType": "image/png"}]}}
    plain = {"message": {**PY_SEND["message"], "parts": [{"text": "x"}]}}
    assert shape_key(png) != shape_key(plain)
    assert any("mediaType" in d for d in differences(png, plain))


def test_text_plain_without_a_text_member_is_not_a_default() -> None:
    # A file part's media type is information, even when it says text/plain.
    file_part = {"parts": [{"raw": "aGk=", "mediaType": "text/plain"}]}
    assert shape_key(file_part) != shape_key({"parts": [{"raw": "aGk="}]})


def test_an_empty_id_is_absent_not_a_variable() -> None:
    assert shape_key({"contextId": "", "taskId": None}) == shape_key({})
    assert shape_key({"contextId": "c-1"}) != shape_key({})


def test_zero_and_false_are_not_empty() -> None:
    assert shape_key({"historyLength": 0}) != shape_key({})
    assert shape_key({"returnImmediately": False}) != shape_key({})


def test_empty_values_inside_lists_keep_their_place() -> None:
    assert shape_key({"a": [{}, 1]}) != shape_key({"a": [1]})
