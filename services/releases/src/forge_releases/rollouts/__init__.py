"""Rollout plans (docs/rollouts.md): a release's staged-rollout percentage raised step by step by
an evaluator that any number of replicas run, and halted when a health gate fails."""
