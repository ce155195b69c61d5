"""The plugin gateway: gRPC connections to plugins, event delivery and plugin HTTP routes."""
