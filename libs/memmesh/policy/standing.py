"""Which atoms are standing constraints: facts an answer must honour whenever a request could
touch them, whether or not the request names them (issue: "what should I cook tonight?"
must not ignore a peanut allergy).

Allergies, intolerances, diets, health limits and conditions, medication, sobriety and
accessibility needs are standing constraints; tools, units, formats and schedules are not
(they matter only when named). Pure and deterministic.
"""

from __future__ import annotations

import re

from memmesh.policy.sensitivity import normalised

# The second segment of a constraint key ("constraint.allergy", "constraint.diet.gluten").
STANDING_KEY_AREAS = frozenset(
    """
    allergy allergies intolerance diet dietary medical medication medicine health condition
    sobriety ability disability accessibility mobility
    """.split()
)
# Words that make an atom's text a standing constraint when its category or key says
# constraint or identity ("User is vegan." extracted as identity still counts).
_STANDING_TERMS = re.compile(
    r"\b(?:allerg(?:y|ies|ic)|intoleran(?:t|ce)|vegetarian|vegan|pescatarian|pescetarian|"
    r"kosher|halal|gluten|coeliac|celiac|lactose|dairy free|nut free|diabet(?:es|ic)|"
    r"epilep(?:sy|tic)|asthma(?:tic)?|insulin|medication|inhaler|epipen|anaphyla(?:xis|ctic)|"
    r"sober|teetotal|wheelchair|hearing aid|screen reader|guide dog|blind|deaf|"
    r"does not eat|doesn t eat|cannot eat|can t eat|does not drink|doesn t drink|"
    r"cannot walk|can t walk|pregnan(?:t|cy))\b"
)
_STANDING_CATEGORIES = frozenset({"CONSTRAINT", "IDENTITY", "UNSPECIFIED", ""})


def is_standing_constraint(key: str, text: str, category: str = "CONSTRAINT") -> bool:
    """Whether an atom (its key, text and category name, e.g. "CONSTRAINT") is a standing
    constraint to push whenever a request could touch it."""
    segments = key.lower().split(".")
    if segments[0] == "constraint" and len(segments) > 1 and segments[1] in STANDING_KEY_AREAS:
        return True
    if category not in _STANDING_CATEGORIES and segments[0] != "constraint":
        return False
    return _STANDING_TERMS.search(normalised(text)) is not None
