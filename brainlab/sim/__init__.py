"""Replays and what-ifs over the store: broker policies, regulator rules, threshold tuning."""
