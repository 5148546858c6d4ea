"""The replay fuzzer behind `scripts/fuzz-replay` (issue #33): a differential judge of replay.

Random client programs (`program`) run over JSON-RPC, HTTP+JSON and gRPC against a real
a2a-sdk agent through `a2a-recorder record`, then again, with fresh ids and the same shape,
against `a2a-recorder replay --strict` of that capture (`harness`).  The clients are written
from the spec (`wire`: raw HTTP with httpx, grpcio calls with a2a-sdk's generated messages),
and every request's client-visible outcome is kept (`run`).  The two runs must see the same
outcomes up to a consistent renaming of the ids each run was handed or made up, timestamps
masked (`judge`), and the replayer must have answered everything from the capture.
"""
