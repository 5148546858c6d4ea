"""The protobuf wire format by hand (protobuf.dev/programming-guides/encoding): enough to build
and read A2A's messages by field number, independently of any descriptor under test."""

from __future__ import annotations


def varint(value: int) -> bytes:
    out = bytearray()
    while True:
        low, value = value & 0x7F, value >> 7
        out.append(low | (0x80 if value else 0))
        if not value:
            return bytes(out)


def field(number: int, value: bytes | str | int) -> bytes:
    """One field: an int as a varint, text and bytes length-delimited."""
    if isinstance(value, int):
        return varint(number << 3) + varint(value)
    data = value.encode() if isinstance(value, str) else value
    return varint(number << 3 | 2) + varint(len(data)) + data


def fields(data: bytes) -> list[tuple[int, int | bytes]]:
    """(field number, varint or bytes) of each field, in order."""
    out: list[tuple[int, int | bytes]] = []
    at = 0
    while at < len(data):
        key, at = _read_varint(data, at)
        if key & 7 == 0:
            value, at = _read_varint(data, at)
            out.append((key >> 3, value))
        elif key & 7 == 2:
            size, at = _read_varint(data, at)
            out.append((key >> 3, data[at : at + size]))
            at += size
        else:
            raise AssertionError(f"wire type {key & 7} not expected here")
    return out


def values(data: bytes, number: int) -> list[int | bytes]:
    """The values of field `number`, in order."""
    return [value for n, value in fields(data) if n == number]


def _read_varint(data: bytes, at: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = data[at]
        value |= (byte & 0x7F) << shift
        at, shift = at + 1, shift + 7
        if not byte & 0x80:
            return value, at
