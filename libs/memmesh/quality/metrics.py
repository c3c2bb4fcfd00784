"""The six core memory quality metrics of seed 001 §2.12, computed from a replayed fixture.

Scoring is a pure function of the fixture's labels and what the gateway answered: no clock,
no randomness, facts and items visited in a fixed order, so identical inputs give identical
metrics. Definitions (what counts, and over what):

- **Wrong-recall rate** (how often recalled memory was incorrect, confirmed by user
  correction): a *wrong recall* is a retrieved item (an atom or an archive excerpt of a
  bundle) about a fact that the user corrects (`corrects`) in a turn after that Brief and
  before the next one. Rate = wrong recalls / retrieved items over all Briefs.
- **Redundancy rate** (how often Selene re-asked something already known): a *redundant
  question* is a Brief's clarification question about a fact that is settled at that point
  (stated or corrected by the user, `states`/`corrects`, and not unsettled since by a
  conflicting statement, `conflicts`). Rate = redundant questions / Briefs.
- **Retrieval precision** (fraction of retrieved items actually used/helpful): a retrieved
  item is *useful* when it is about a fact the Brief labels `useful` (or `needed`). Rate =
  useful retrieved items / retrieved items (1 when nothing was retrieved).
- **Retrieval recall, bounded proxy** (how often Selene failed to retrieve an item that
  would have prevented a repeat question or mistake): each fact a Brief labels `needed` is
  *found* when any text the bundle carries (push memory, working memory, atoms, excerpts,
  digests, summary, loops, bridge) is about it, else it is a *miss*. Rate = found / needed
  (1 when nothing was needed); the misses are the failures the spec counts.
- **Memory-caused correction rate** (user corrections triggered specifically by memory
  usage): a user turn with `corrects` is *memory-caused* when the Brief before it carried
  a corrected fact. Rate = memory-caused corrections / user turns.
- **Invasiveness triggers** (unexpected personal recall events that caused user discomfort
  or an explicit do-not-remember command): a Brief that carried a fact the user then
  objects to before the next Brief, by a turn labelled `discomfort` or a command labelled
  `about`. Each Brief counts once however many objections follow it. A count, not a rate.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

from memmesh.quality.fixtures import Fact, Fixture, Step


@dataclass(frozen=True)
class BriefObservation:
    """What one Brief answered, as the metrics need it (texts in bundle order)."""

    step: int
    retrieved: tuple[str, ...]
    carried: tuple[str, ...]
    question: str


@dataclass(frozen=True)
class QualityMetrics:
    """The §2.12 counts of one fixture (or the sum of several) and the rates made of them."""

    briefs: int = 0
    user_turns: int = 0
    retrieved_items: int = 0
    useful_items: int = 0
    wrong_recalls: int = 0
    questions: int = 0
    redundant_questions: int = 0
    needed: int = 0
    needed_found: int = 0
    corrections: int = 0
    memory_caused_corrections: int = 0
    invasiveness_triggers: int = 0

    def __add__(self, other: QualityMetrics) -> QualityMetrics:
        names = self.__dataclass_fields__
        return QualityMetrics(**{n: getattr(self, n) + getattr(other, n) for n in names})

    def rates(self) -> dict[str, float]:
        """The rates, rounded to four places; an empty denominator gives the ideal value."""
        return {
            "wrong_recall_rate": _rate(self.wrong_recalls, self.retrieved_items, 0),
            "redundancy_rate": _rate(self.redundant_questions, self.briefs, 0),
            "retrieval_precision": _rate(self.useful_items, self.retrieved_items, 1),
            "retrieval_recall_proxy": _rate(self.needed_found, self.needed, 1),
            "memory_caused_correction_rate": _rate(
                self.memory_caused_corrections, self.user_turns, 0
            ),
        }

    def as_dict(self) -> dict[str, object]:
        """Counts and rates, keys sorted, for printing and comparing."""
        counts = {n: getattr(self, n) for n in self.__dataclass_fields__}
        return dict(sorted({**counts, **self.rates()}.items()))


def _rate(numerator: int, denominator: int, empty: int) -> float:
    if denominator == 0:
        return float(empty)
    return round(float(Fraction(numerator, denominator)), 4)


def _about(facts: Sequence[Fact], texts: Sequence[str]) -> bool:
    return any(fact.matches(text) for fact in facts for text in texts)


def score(fixture: Fixture, observations: Sequence[BriefObservation]) -> QualityMetrics:
    """The metrics of one replay: every Brief step of the fixture must have its observation."""
    by_step = {o.step: o for o in observations}
    missing = [s.index for s in fixture.steps if s.kind == "brief" and s.index not in by_step]
    if missing:
        raise ValueError(f"no observation of brief steps {missing}")
    counts = dict.fromkeys(QualityMetrics.__dataclass_fields__, 0)
    settled: set[str] = set()
    objected_briefs: set[int] = set()
    last: BriefObservation | None = None

    def facts(step: Step, label: str) -> list[Fact]:
        return [fixture.facts[name] for name in step.label(label)]

    for step in fixture.steps:
        if step.kind == "brief":
            last = by_step[step.index]
            useful = facts(step, "useful")
            counts["briefs"] += 1
            counts["retrieved_items"] += len(last.retrieved)
            counts["useful_items"] += sum(_about(useful, [t]) for t in last.retrieved)
            needed = facts(step, "needed")
            counts["needed"] += len(needed)
            counts["needed_found"] += sum(_about([f], last.carried) for f in needed)
            if last.question:
                counts["questions"] += 1
                known = [fixture.facts[name] for name in sorted(settled)]
                counts["redundant_questions"] += _about(known, [last.question])
            continue
        if step.kind == "say":
            counts["user_turns"] += 1
        corrected = facts(step, "corrects")
        if corrected:
            counts["corrections"] += 1
            if last is not None:
                counts["wrong_recalls"] += sum(_about(corrected, [t]) for t in last.retrieved)
                counts["memory_caused_corrections"] += _about(corrected, last.carried)
        objected = facts(step, "discomfort") + facts(step, "about")
        if last is not None and last.step not in objected_briefs and _about(objected, last.carried):
            objected_briefs.add(last.step)
            counts["invasiveness_triggers"] += 1
        settled |= {*step.label("states"), *step.label("corrects")}
        settled -= set(step.label("conflicts"))
    return QualityMetrics(**counts)
