"""Routing conf generator: confs/<platform>.toml from the installed torch's
operator schemas and each route kind's coverage. See docs/routing.md.

    python -m tools.routing_conf generate            # all platforms into confs/
    python -m tools.routing_conf flaggems-ops WHEEL  # refresh confs/sources/flaggems_ops.txt
"""
