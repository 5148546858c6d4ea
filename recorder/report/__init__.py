"""A picture of a session: a capture as one self-contained HTML page.

`render_report(capture)` is pure (a `Capture` in, HTML text out); `report_command` is the
`a2a-recorder report FILE -o OUT` shell.  The page draws a sequence diagram (client,
recorder, agent and webhook lanes, one arrow per exchange, stream events as ticks), a timeline
of every exchange's duration, and opens an exchange's request and response on a click.  It
fetches nothing: CSS, script and SVG are inline.

Modules: `_answers` (what an A2A answer says), `_facts` (per exchange: lanes, outcome, ticks,
flags), `_display` (request and response as text), `_layout` (pixels), `_page` (the template),
`_command` (the CLI); `_fleet` draws a fleet's folder as one waterfall (`fleet_page`).

May import `recorder.show`, `recorder.lint`, `recorder.capture`, `recorder.protocol` and
`recorder.options`.
"""

from recorder.report._command import report_command
from recorder.report._fleet import fleet_page
from recorder.report._page import Marks, render_report

__all__ = ["Marks", "fleet_page", "render_report", "report_command"]
