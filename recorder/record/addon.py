"""Entry point for `mitmdump -s recorder/record/addon.py` (and `mitmweb -s`): the whole set.

Example::

    mitmdump --mode reverse:http://127.0.0.1:8080 -p 9000 \\
        -s recorder/record/addon.py --set a2a_out=session.http
"""

from __future__ import annotations

import sys
from pathlib import Path

# Loaded as a script, this file's package may not be importable yet: add the project root.
_ROOT = Path(__file__).resolve().parents[2]
if str(_ROOT) not in sys.path:
    sys.path.insert(0, str(_ROOT))

from recorder.record._addons import recording_addons  # noqa: E402

_recording = recording_addons()
_recording.listen()  # for the process's life: mitmdump runs one recording
addons = [_recording, _recording.audit]
