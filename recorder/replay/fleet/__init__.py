"""A fleet: a folder of captures replayed at once, one `Replayer` per agent.

`plan_agents` groups the captures into agents (`_route`); each agent is served on a port of
its own, or all behind one forward proxy that routes by the authority a request names
(`_proxy`, connections of the faces' kind that also take CONNECT and HTTP/2 prior knowledge);
`Fleet` starts and stops them and writes the ports file (`_fleet`).

Imports the faces (`recorder.replay.faces`) and the core (`recorder.replay.core`).
"""

from recorder.replay.fleet._fleet import Fleet, FleetAgent, fleet_paths, ports_file_problem

__all__ = ["Fleet", "FleetAgent", "fleet_paths", "ports_file_problem"]
