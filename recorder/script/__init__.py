"""A capture read as a script: steps, the ids in each with their origin, and how to put live
values in recorded bytes.  Replay answers from it; verify sends from it.

`_values` says what a request is compared as, `_slots` (with `_learn`) where it names ids,
`_script` loads the `Script` of `Step`s, `_answers` reads answers, `_swap` is the one swap path
and `_mint` the `IdFactory`.

It may import `recorder.capture`, `recorder.protocol` and `recorder.redaction`; nothing here
does I/O.
"""

from recorder.script._answers import (
    CARD_OPERATIONS,
    answer_documents,
    answer_succeeded,
    handed_out,
    located_ids,
    recorded_cards,
)
from recorder.script._learn import skeleton
from recorder.script._mint import IdFactory, fresh_id
from recorder.script._script import (
    Class,
    RecordedSlot,
    Script,
    Step,
    delivery_url,
    load_script,
    provenance,
)
from recorder.script._slots import Known, Slot, find_slots, leaves, positions_of, snake_case
from recorder.script._swap import (
    MIN_EMBEDDED,
    Embedded,
    Lookup,
    Swap,
    Template,
    dumps_like,
    embedded_pairs,
    form_of,
    json_bytes,
    json_text,
    prepare,
    substitute_body,
    substitute_headers,
    substitute_json_text,
    swap_text,
    wire_bytes,
)
from recorder.script._values import (
    Json,
    Key,
    Location,
    Provenance,
    credential_names,
    differences,
    make_key,
    request_value,
    shape,
    token,
)

__all__ = [
    "CARD_OPERATIONS",
    "Class",
    "Embedded",
    "IdFactory",
    "Json",
    "Key",
    "Known",
    "Location",
    "Lookup",
    "MIN_EMBEDDED",
    "Provenance",
    "RecordedSlot",
    "Script",
    "Slot",
    "Step",
    "Swap",
    "Template",
    "answer_documents",
    "answer_succeeded",
    "credential_names",
    "delivery_url",
    "differences",
    "dumps_like",
    "embedded_pairs",
    "find_slots",
    "form_of",
    "fresh_id",
    "handed_out",
    "json_bytes",
    "json_text",
    "leaves",
    "load_script",
    "located_ids",
    "make_key",
    "positions_of",
    "prepare",
    "provenance",
    "recorded_cards",
    "request_value",
    "shape",
    "skeleton",
    "snake_case",
    "substitute_body",
    "substitute_headers",
    "substitute_json_text",
    "swap_text",
    "token",
    "wire_bytes",
]
