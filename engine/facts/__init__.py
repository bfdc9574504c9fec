"""Memory that stays true: which summaries state the same fact, and which a newer value replaces.

At write time each new summary is compared with the user's few nearest active summaries, not
only at sleep. Without a model, this package decides only the clear cases: the same subject and
relation with a different value (where someone lives or works, their job, age, counts,
favourites, partner, a planned move or their next trip) supersedes the old summary, and a
summary stating the same fact as a neighbour merges into it. The text is read clause by clause,
so the fact may sit in any clause ("Nico has moved on from Coldplay, Wilco is Nico's favourite
band now"). Precision comes first, because a wrong fact hides a true summary while a missed one
only leaves both active: questions, negations, hedges, the past, assistant echoes, other
people's reports and near-but-unequal values read as no fact, and sleep reconciles those later.

    extract_fact("User just moved to Porto, the apartment is lovely.")
    # Fact(subject="user", relation="lives_in", value="porto", multi=False)
    decide(Candidate("sum-9", text, valid_from), neighbours)
    # Decision(kind="supersede", target_ids=("sum-2",), reason="lives_in changed: lisbon → porto")
"""

from hymem.facts.decide import DUP_COSINE, Candidate, Decision, DecisionKind, decide
from hymem.facts.slots import Fact, Reading, extract_fact, fact_key, read_fact

__all__ = [
    "DUP_COSINE",
    "Candidate",
    "Decision",
    "DecisionKind",
    "Fact",
    "Reading",
    "decide",
    "extract_fact",
    "fact_key",
    "read_fact",
]
