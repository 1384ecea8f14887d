"""A straightforward per-row replay: one agent at a time, Python sets (the benchmark baseline).

It calls each policy's :meth:`~brainlab.sim.policies.Policy.choose` and counts with sets, so
it also checks the vectorised :func:`brainlab.sim.broker.replay` (tests compare the two).
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from brainlab.sim.policies import Policy, iter_views, make_policy
from brainlab.sim.sprintset import SprintSet
from brainlab.spec.thresholds import Thresholds


def replay_reference(ss: SprintSet, policies: Sequence[str | Policy],
                     miss_overhead_tokens: float = 250.0,
                     thresholds: Thresholds | None = None) -> pd.DataFrame:
    """Per-agent rows (counts, tokens, breath metrics) computed row by row."""
    thresholds = thresholds or Thresholds()
    policies = [make_policy(p) for p in policies]
    for policy in policies:
        policy.prepare(ss)
    size = {(ss.projects[p] if p >= 0 else "", path): b for p, path, b in
            zip(ss.file_project, ss.file_path, ss.file_bytes, strict=True)}
    domain_of: dict[tuple[str, str], str] = {}
    for d, (project, domain) in enumerate(ss.domain_names):
        for f in ss.dom_files[ss.dom_ptr[d]:ss.dom_ptr[d + 1]]:
            domain_of.setdefault((project, ss.file_path[f]), domain)
    refs: dict[int, set[str]] = {}
    for r, f in zip(ss.ref_row.tolist(), ss.ref_file.tolist(), strict=True):
        refs.setdefault(r, set()).add(ss.file_path[f])
    n_dom = max(len(ss.domain_names), 1)
    todo = {(int(k) // n_dom, ss.domain_names[int(k) % n_dom][1]) for k in ss.todo_keys}
    released_rec: dict[int, set[str]] = {}
    for s, f in zip(ss.rel_sprint.tolist(), ss.rel_file.tolist(), strict=True):
        released_rec.setdefault(s, set()).add(ss.file_path[f])
    has_rec_expire = ss.rows["has_recorded_expire"].tolist()
    sprint_of = ss.row_sprint.tolist()
    out = []
    for policy in policies:
        label = policy.label
        stale_first = getattr(policy, "stale_overrides_todo", True)
        for r, view in iter_views(ss, with_history=policy.needs_history):
            loaded = list(dict.fromkeys(policy.choose(view)))
            referenced = refs.get(r, set())
            hits = [f for f in loaded if f in referenced]
            missed = referenced - set(loaded)
            sprint = sprint_of[r]
            kept = 0
            for f in loaded:
                if policy.name == "recorded" and has_rec_expire[r]:
                    kept += f not in released_rec.get(sprint, set())
                    continue
                domain = domain_of.get((view.project, f), view.domain)
                open_todo = (sprint, domain) in todo
                kept += open_todo and (f in referenced or not stale_first)
            tok = {f: size.get((view.project, f), ss.default_bytes) / 4.0
                   for f in set(loaded) | referenced}
            n_loaded, n_ref = len(loaded), len(referenced)
            released = n_loaded - kept
            row = {
                "sprint_id": view.sprint_id, "agent": view.agent, "policy": label,
                "referenced": n_ref, "loaded": n_loaded, "hits": len(hits),
                "misses": len(missed), "waste": n_loaded - len(hits), "released": released,
                "kept": kept, "tokens_loaded": sum(tok[f] for f in loaded),
                "tokens_miss": sum(tok[f] for f in missed) + miss_overhead_tokens * len(missed),
                "context_load": n_loaded / n_ref if n_ref else None,
                "stale_ratio": (n_loaded - len(hits)) / n_loaded if n_loaded else None,
                "breath_depth": kept,
                "exhale_rate": released / n_loaded if n_loaded else None,
            }
            row["tokens_total"] = row["tokens_loaded"] + row["tokens_miss"]
            row["alert_overload"] = (row["context_load"] or 0) > thresholds.context_load_max
            row["alert_noise"] = (row["stale_ratio"] or 0) > thresholds.stale_ratio_max
            row["alert_retention"] = row["exhale_rate"] is not None and \
                row["exhale_rate"] < thresholds.exhale_rate_min
            out.append(row)
    return pd.DataFrame(out)
