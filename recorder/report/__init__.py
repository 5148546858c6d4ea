"""A picture of a session: a capture as one self-contained HTML page.

`render_report(capture)` is pure; `report_command` is the `a2a-recorder report FILE -o OUT`
shell; `fleet_page` draws a fleet's folder as one waterfall.  The page draws a sequence
diagram and a timeline, and opens an exchange on a click; it fetches nothing.  Modules:
`_facts` (per exchange: lanes, outcome, ticks, flags), `_display` (request and response as
text), `_layout` (pixels), `_page` (the template), `_command` (the CLI).

May import `recorder.show`, `recorder.lint`, `recorder.capture`, `recorder.protocol` and
`recorder.options`.
"""

from recorder.report._command import report_command
from recorder.report._fleet import fleet_page
from recorder.report._page import Marks, render_report

__all__ = ["Marks", "fleet_page", "render_report", "report_command"]
