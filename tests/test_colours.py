"""One colour per meaning across notebooks and report (issue 44 item 5), labels cut in the
middle, counts on whole-number axes."""

import pandas as pd

from brainlab.spec import colours
from brainlab.viz import audit_charts, explore, theme


def _scale_of(chart_dict: dict, field: str) -> dict:
    found = []

    def walk(node):
        if isinstance(node, dict):
            color = node.get("encoding", {}).get("color", {})
            if color.get("field") == field and "scale" in color:
                found.append(color["scale"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(chart_dict)
    assert found, f"no colour scale on {field}"
    return dict(zip(found[0]["domain"], found[0]["range"], strict=True))


def test_good_is_green_and_bad_red_in_every_table():
    assert colours.OUTCOME["integrated"] == colours.SESSION_LABEL["good"] == colours.GOOD
    assert colours.OUTCOME["ended"] == colours.SESSION_LABEL["bad"] == colours.BAD
    assert colours.RATIO_BAND["healthy"] == colours.GOOD
    assert colours.RATIO_BAND["narcissistic-loop"] == colours.SEVERITY["error"] == colours.BAD
    # a category of work is neither good nor bad: it never takes green or red
    assert not {colours.GOOD, colours.BAD} & set(colours.CATEGORY.values())


def test_ticket_outcomes_take_their_spec_colour_in_the_alert_chart():
    weekly = pd.DataFrame({"week_start": ["2026-01-05"], "iso_week": ["2026-W02"],
                           "ended": [1], "escalated": [2], "integrated": [3],
                           "bad_tickets": [3], "true_positives": [3]})
    chart = explore.alerts_per_week(weekly, ["ended", "escalated", "integrated"], "tickets")
    scale = _scale_of(chart.to_dict(), "signal")
    assert scale == {k: colours.OUTCOME[k] for k in ("ended", "escalated", "integrated")}
    y = chart.to_dict()["layer"][0]["encoding"]["y"]
    assert y["axis"]["tickMinStep"] == 1 and y["axis"]["format"] == ",d"


def test_audit_verdicts_and_severities_use_the_spec_table():
    audit = pd.DataFrame({"field": ["tokens_used"] * 2, "disagrees": [True, False]})
    scale = _scale_of(audit_charts.disagreement_share(audit).to_dict(), "flag")
    assert scale["disagrees"] == colours.BAD and scale["within tolerance"] == colours.GOOD
    found = pd.DataFrame({"rule": ["R1"], "severity": ["error"]})
    scale = _scale_of(explore.violations_by(found, "rule", "t").to_dict(), "severity")
    assert scale["error"] == colours.BAD


def test_labels_are_cut_in_the_middle_keeping_the_file_name():
    path = "/home/someone/projects/brain/agents/a/deep/folder/the-agent-that-matters.md"
    cut = theme.cut_middle(path, 40)
    assert len(cut) == 40 and cut.endswith("the-agent-that-matters.md") and "…" in cut
    assert cut.startswith("/home")
    assert theme.cut_middle("short.md", 40) == "short.md"
    # two paths that differ only by their file name stay apart
    a, b = (theme.cut_middle(f"/very/long/common/prefix/of/two/paths/{n}.py", 30)
            for n in ("alpha", "beta"))
    assert a != b


def test_most_missed_files_show_their_file_names_and_whole_counts():
    from brainlab.viz import broker_charts

    path = "/home/user/projects/originsdigital/src/a/very/deep/folder/billing.routes.ts"
    # the replay's missed_files rows (simulate broker --json): policy, file (its path), misses
    files = pd.DataFrame({"policy": ["protocol", "history"], "file": [path, path],
                          "misses": [3, 2]})
    spec = broker_charts.most_missed(files).to_dict()
    rows = next(iter(spec["datasets"].values()))
    assert rows[0]["file_name"].endswith("billing.routes.ts")
    assert len(rows[0]["file_name"]) <= 48
    assert rows[0]["file"] == path  # the whole path stays in the tooltip
    assert spec["encoding"]["x"]["axis"]["tickMinStep"] == 1
