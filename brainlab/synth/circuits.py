"""Synthetic ticket circuits: journals (SPEC §6.7) for tickets run under the default rules.

Each ticket goes through the steps of SPEC §6.1; stops of every code of SPEC §6.2 happen at
their steps, are decided by the table, a regulator (questioned, sometimes refused) or the
supervisor as SPEC §6.3-§6.5 say, with the default limits. Journals are written one file per
ISO week of the ticket's first event: ``<out_dir>/circuits/<YYYY>-W<WW>.jsonl``, a ticket's
events together and in time order.

Planted effect: the stop kind ``references-instables`` (code 23 at the final pass) almost
never resolves after its second RELANCE, so tickets that meet it loop to the third RELANCE
and end there; lowering ``max_relance_same_stop`` to 2 saves those sessions without waking
the supervisor more.
"""

from __future__ import annotations

import json
import random
from datetime import datetime, timedelta
from pathlib import Path

from brainlab.spec.regulator import ADMISSION_REASONS, FICHE_REASON, RegulatorRules
from brainlab.synth.files import BrainFiles

COMPONENTS = ("lexer", "parser", "store", "api", "cli", "ui")
PLANTED_KIND = "references-instables"
TOKENS = {"testwriter": 40_000, "developpeur": 60_000, "relecteur": 30_000,
          "regulateur": 25_000, "questionneur": 12_000, "referent-technique": 20_000}
# Stop sites: (step, name, code, kind, probability per pass, return probability by rank).
COMPONENT_STOPS = (
    ("2.3", "sans-livraison", 15, "sans-changement", 0.10, (0.20, 0.10, 0.60)),
    ("2.3", "hors-portee", 19, "renvoi-testwriter", 0.04, (0.10, 0.10, 0.50)),
    ("2.3", "hors-portee", 19, "bloque", 0.04, (0.20, 0.10, 0.50)),
    ("2.4", "besoin", 20, "question-agent", 0.06, (0.15, 0.10, 0.50)),
)
FINAL_STOPS = (
    ("3", "controles", None, "rouge-autre-composant", 0.06, (0.15, 0.10, 0.50)),
    ("3", "controles", None, "constats-a-arbitrer", 0.05, (0.20, 0.10, 0.50)),
    ("3", "references", 23, "references-changees", 0.06, (0.20, 0.10, 0.50)),
    ("3", "references", 23, PLANTED_KIND, 0.07, (0.60, 0.97, 0.97)),
)
INTEGRATION_STOPS = (
    ("5.2", "integration", 17, "a-repasser", 0.05, (0.10, 0.10, 0.50)),
    ("5.2", "integration", 17, "ci-rouge", 0.06, (0.20, 0.10, 0.50)),
)


class _Ended(Exception):
    """The ticket's circuit ended (its `end` event is written)."""


class _Ticket:
    """Writes one ticket's events while it walks the circuit under the default rules."""

    def __init__(self, name: str, rng: random.Random, clock: datetime, rules: RegulatorRules):
        self.name, self.rng, self.clock, self.rules = name, rng, clock, rules
        self.events: list[dict] = []
        self.components = rng.sample(COMPONENTS, rng.choice((1, 1, 2, 2, 3)))
        self.regulator_stops: dict[tuple[str, str], int] = {}
        self.rendered = 0
        # the circuit-skills events (verdicts, plan answers, sous-charge, findings) draw from
        # their own stream, so adding them changed no other draw of the journals
        self.extra = random.Random(f"circuit-events:{name}")
        self.findings = 0

    def emit(self, event: str, **fields) -> None:
        self.clock += timedelta(minutes=self.rng.randint(2, 40))
        stamp = self.clock.strftime("%Y-%m-%dT%H:%M:%SZ")
        self.events.append({"ticket": self.name, "ts": stamp, "event": event, **fields})

    def session(self, agent: str, **fields) -> None:
        tokens = int(TOKENS[agent] * self.rng.lognormvariate(0, 0.35))
        self.emit("session", agent=agent, tokens=tokens, **fields)

    def emit_extra(self, event: str, **fields) -> None:
        """An event of the seed's skills, timed and drawn from the ticket's own extra stream."""
        self.clock += timedelta(minutes=self.extra.randint(2, 20))
        stamp = self.clock.strftime("%Y-%m-%dT%H:%M:%SZ")
        self.events.append({"ticket": self.name, "ts": stamp, "event": event, **fields})

    def referent(self, question: str) -> None:
        """The référent-technique arbitrates (seed skill "referent").

        Its verdict is tranché, or goes up to the responsible person (a wake-up); a tranché
        verdict may file findings as closed tickets.
        """
        tokens = int(TOKENS["referent-technique"] * self.extra.lognormvariate(0, 0.35))
        self.emit_extra("session", agent="referent-technique", tokens=tokens)
        verdict = "monte au responsable" if self.extra.random() < 0.3 else "tranché"
        self.emit_extra("verdict", verdict=verdict, question=question)
        if verdict == "tranché" and self.extra.random() < 0.4:
            self.findings += 1
            self.emit_extra("decouverte", filed=f"{self.name}-d{self.findings}",
                            by="referent-technique")

    def end(self, outcome: str) -> None:
        self.emit("end", outcome=outcome)
        raise _Ended

    def supervisor(self, component: str) -> None:
        """The supervisor is woken: most often relaunches, else leaves the ticket escalated."""
        if self.rng.random() < 0.7:
            self.emit("decision", by="supervisor", kind="RELANCE_REPRENDRE", new_fact=True,
                      facts=["au-titre"], depuis=[])
            self.session("developpeur")
        else:
            self.end("escalated")

    def regulator(self, step: str, component: str, returned: bool, new_fact: bool) -> bool:
        """A fresh regulator decides (SPEC §6.4-§6.5); False when the stop went up."""
        rules = self.rules
        refusals = misses = 0
        while True:
            self.session("regulateur")
            if self.rng.random() < 0.04:  # missing or malformed decision (fiche)
                misses += 1
                self.emit("admission", accepted=False, reason=FICHE_REASON)
                if misses > rules.max_fiche_reasks:
                    return False
                continue
            if self.extra.random() < 0.08:  # a structural question: the référent arbitrates
                self.referent(f"{step} {component}: nouvelle consommation ?")
            rounds = 0
            while True:  # SPEC §6.5 the questioner, up to max_question_rounds rounds
                questioned = self.rng.random() < 0.3
                self.session("questionneur", questioned=questioned)
                if not questioned:
                    break
                rounds += 1
                if rounds >= rules.max_question_rounds:
                    return False
                self.session("regulateur")
            if self.rng.random() < 0.06:  # the regulator's own MONTE
                self.emit("decision", by="regulator", kind="MONTE", new_fact=new_fact,
                          facts=["hors-titre", component])
                return False
            kind = self.rng.choice(("RELANCE_REPRENDRE", "RELANCE_DEPUIS"))
            self.emit("decision", by="regulator", kind=kind, new_fact=new_fact,
                      facts=["rouge-de", component],
                      depuis=[{"component": component, "agent": "developpeur"}]
                      if kind == "RELANCE_DEPUIS" else [])
            if self.rng.random() < (0.12 if refusals == 0 else 0.25):
                refusals += 1
                reason = self.rng.choice(ADMISSION_REASONS[:4])
                self.emit("admission", accepted=False, reason=reason)
                if refusals > rules.max_refusals:
                    return False
                continue
            self.emit("admission", accepted=True)
            return True

    def stop_site(self, step: str, component: str, name: str, code, kind: str,
                  returns: tuple[float, ...]) -> None:
        """A stop that may come back after each relaunch, handled under the default rules."""
        rules, rank = self.rules, 1
        while True:
            new_fact = True if rank == 1 else self.rng.random() < (
                0.97 if kind == PLANTED_KIND else 0.75)
            stop = {"name": name, "code": code, "step": step, "component": component,
                    "kind": kind, "facts": ["rouge-de", component]}
            if rank > 1:
                stop["new_fact"] = new_fact
            self.emit("stop", **stop)
            if rank > rules.max_relance_same_stop:  # SPEC §6.5: ends without a regulator
                self.end("ended")
            if rank > 1 and not new_fact and rules.escalate_without_new_fact:
                self.emit("decision", by="table", kind="MONTE", new_fact=False, facts=[])
                self.supervisor(component)
            elif code == 18:
                self.supervisor(component)
            elif kind in rules.table_kinds():  # SPEC §6.3 the table decides
                self.emit("decision", by="table", kind="RELANCE_DEPUIS", new_fact=True,
                          facts=["au-titre"])
            else:
                key = (step, component)
                self.regulator_stops[key] = self.regulator_stops.get(key, 0) + 1
                if self.regulator_stops[key] > rules.max_regulator_stops:
                    self.supervisor(component)
                elif not self.regulator(step, component, rank > 1, new_fact):
                    self.supervisor(component)
            self.session("developpeur")  # the relaunched work
            if self.rng.random() < 0.5:
                self.session("testwriter")
            if self.rng.random() >= returns[min(rank, len(returns)) - 1]:
                return
            rank += 1

    def maybe_stops(self, sites, component: str) -> None:
        for step, name, code, kind, prob, returns in sites:
            if self.rng.random() < prob:
                self.stop_site(step, component, name, code, kind, returns)

    def run(self) -> None:
        try:
            self.emit("step", step="1.1", component=".")
            self.emit("step", step="1.2", component=".")
            if self.extra.random() < 0.35:  # plan questions answered by the référent (1.2)
                for _ in range(self.extra.randint(1, 3)):
                    answer = "CHANGE" if self.extra.random() < 0.4 else "GARDE"
                    self.emit_extra("answer", answer=answer, by="referent-technique",
                                    question="le plan couvre-t-il l'usage actuel ?")
            if self.rng.random() < 0.04:  # unresolved plan questioning (18)
                self.stop_site("1.2", ".", "question", 18, "plan", (0.0,))
            for component in self.components:
                self.emit("step", step="2.1", component=component)
                self.session("testwriter")
                self.emit("step", step="2.3", component=component)
                self.session("developpeur")
                if self.extra.random() < 0.03:  # the component is under load (fact sous-charge)
                    self.emit_extra("sous-charge", component=component)
                self.maybe_stops(COMPONENT_STOPS[:3], component)
                self.emit("step", step="2.4", component=component)
                self.maybe_stops(COMPONENT_STOPS[3:], component)
            self.emit("step", step="3", component=".")
            self.maybe_stops(FINAL_STOPS, self.components[0])
            self.review()
            self.emit("step", step="5.1", component=".")
            self.maybe_stops(INTEGRATION_STOPS, ".")
            self.end("integrated")
        except _Ended:
            pass

    def review(self) -> None:
        """SPEC §6.1 step 4: RENDU sends findings back; a 3rd rendered review stops (16)."""
        self.emit("step", step="4", component=".")
        while True:
            self.session("relecteur")
            if self.rng.random() >= (0.3 if self.rendered < 2 else 0.6):
                self.emit("review", verdict="ACCEPTÉ")
                return
            self.emit("review", verdict="RENDU")
            self.rendered += 1
            if self.rendered >= self.rules.max_reviews:
                self.stop_site("4", ".", "relecture-arret", 16, "troisieme-relecture",
                               (0.15, 0.10, 0.50))
                return
            self.session("developpeur")


def generate_tickets(rng: random.Random, start: datetime, end: datetime, n_tickets: int,
                     prefix: str = "T", change: tuple[datetime, str] | None = None
                     ) -> list[list[dict]]:
    """The events of ``n_tickets`` synthetic tickets, each list in time order.

    ``change`` = (day, rule spec): a ticket starting on or after ``day`` runs under those
    rules (brainlab.spec.regulator spec, e.g. ``max_relance_same_stop=2``) and each of its
    events says so in a ``rules`` field (an unknown field, kept: SPEC §6.7).
    """
    from brainlab.spec.regulator import named_rule_sets

    span = max((end - start).total_seconds() - 3 * 86400, 3600)
    rules = RegulatorRules()
    changed = next(iter(named_rule_sets([change[1]]).values())) if change else None
    out = []
    for i in range(n_tickets):
        clock = start + timedelta(seconds=rng.random() * span)
        after = change is not None and clock >= change[0]
        ticket = _Ticket(f"{prefix}-{i + 1}", rng, clock, changed if after else rules)
        ticket.run()
        if after:
            for event in ticket.events:
                event["rules"] = change[1]
        out.append(ticket.events)
    return out


def circuit_files(files: BrainFiles, rng: random.Random, start: datetime, end: datetime,
                  n_tickets: int, change: tuple[datetime, str] | None = None) -> list[dict]:
    """Journals as ``circuits/<YYYY>-W<WW>.jsonl`` (one per ISO week); the planted effects."""
    weeks: dict[str, list[str]] = {}
    for events in generate_tickets(rng, start, end, n_tickets, change=change):
        first = datetime.strptime(events[0]["ts"], "%Y-%m-%dT%H:%M:%SZ")
        year, week, _ = first.isocalendar()
        lines = weeks.setdefault(f"{year}-W{week:02d}", [])
        lines.extend(json.dumps(e, ensure_ascii=False) for e in events)
    for name, lines in sorted(weeks.items()):
        files.put(f"circuits/{name}.jsonl", "\n".join(lines) + "\n")
    return [{
        "effect": f"stop kind {PLANTED_KIND} (code 23, step 3) almost never resolves after its"
                  " second RELANCE: lowering max_relance_same_stop to 2 saves sessions without"
                  " adding wake-ups",
        "where": f"circuits/*.jsonl, stops with kind {PLANTED_KIND}",
    }]


def write_circuits(out_dir: Path, rng: random.Random, start: datetime, end: datetime,
                   n_tickets: int) -> list[dict]:
    """Write journals to ``out_dir/circuits/`` (one file per ISO week); return planted effects."""
    files = BrainFiles()
    planted = circuit_files(files, rng, start, end, n_tickets)
    (Path(out_dir) / "circuits").mkdir(parents=True, exist_ok=True)
    files.write(Path(out_dir))
    return planted
