"""Plugins: their configuration, gRPC connections, lifecycle and state, and the HTTP routes proxied
to them."""
