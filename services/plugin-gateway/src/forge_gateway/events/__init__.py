"""Events: signed ingest from the producers' relays, storage, delivery to plugins with OnEvent, and
the admin view of deliveries."""
