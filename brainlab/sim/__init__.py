"""Replays: history re-run under other policies, rule sets and thresholds (pure, seeded)."""
