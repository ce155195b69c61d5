"""Code shared by the forge services: configuration, database, migrations, access, auth,
errors, rendering, the outbox and the `forge` CLI.

A service imports from here, never from another service.
"""
