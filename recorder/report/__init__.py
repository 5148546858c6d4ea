"""A picture of a session: a capture as one self-contained HTML page, which fetches nothing.

`render_report` (pure) draws a sequence diagram and a timeline, and opens an exchange on a
click; `fleet_page` draws a fleet's folder as one waterfall; `report_command` is the shell.

May import `recorder.export`, `recorder.show`, `recorder.lint`, `recorder.diff`,
`recorder.capture`, `recorder.protocol` and `recorder.options`.
"""

from recorder.report._command import report_command
from recorder.report._fleet import fleet_page
from recorder.report._page import Marks, render_report

__all__ = ["Marks", "fleet_page", "render_report", "report_command"]
