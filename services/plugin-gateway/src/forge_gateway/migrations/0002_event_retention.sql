-- Finished events are pruned after a retention period (dead letters stay until an operator acts);
-- this index keeps the pruning query from scanning every event.
CREATE INDEX events_received_idx ON gateway.events (received_at);
