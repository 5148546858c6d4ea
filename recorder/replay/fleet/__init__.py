"""A fleet: a folder of captures replayed at once, one `Replayer` per agent.

Agents (`_route`) are served each on a port of its own or all behind one forward proxy
(`_proxy`); `Fleet` runs them (`_fleet`).

Imports the faces (`recorder.replay.faces`) and the core (`recorder.replay.core`).
"""

from recorder.replay.fleet._fleet import Fleet, FleetAgent, fleet_paths, ports_file_problem

__all__ = ["Fleet", "FleetAgent", "fleet_paths", "ports_file_problem"]
