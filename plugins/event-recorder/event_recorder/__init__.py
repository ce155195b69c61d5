"""Example forge plugin: records the events it receives (deduplicated) and lists them.

``python -m event_recorder --address 127.0.0.1:50051`` runs it; see README.md.
"""

from .recorder import DEFAULT_MAX_EVENTS, Recorder, create_plugin

__all__ = ["DEFAULT_MAX_EVENTS", "Recorder", "create_plugin"]
