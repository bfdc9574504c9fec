"""The fact reader, clause by clause: a fact in any clause, its subject carried by a pronoun or
by ellipsis, blocking words counted where they bear on it, announcements dropped, and the
phrasings of trips, relationships and jobs. Every negative is a text whose fact, read wrongly,
would supersede a true summary.
"""

from __future__ import annotations

import pytest
from hymem.facts import Fact, extract_fact
from hymem.facts.clauses import split_clauses
from hymem.facts.opening import split_prefix
from hymem.facts.slots import MAX_CHARS

POSITIVE: list[tuple[str, str, str, str]] = [
    # the fact in a later clause, its value given by the clause before
    (
        "Dana has been playing Wingspan a lot, it's Dana's favourite game.",
        "dana",
        "favourite:game",
        "wingspan",
    ),
    ("Kim is obsessed with sushi, it's her favourite food.", "kim", "favourite:food", "sushi"),
    (
        "Rae can't stop listening to Muse, they're Rae's favourite band.",
        "rae",
        "favourite:band",
        "muse",
    ),
    ("Vic: I love tacos, they're my favourite food.", "vic", "favourite:food", "tacos"),
    ("Pat dropped Muse, Blur is Pat's favourite band now.", "pat", "favourite:band", "blur"),
    ("Pat's favourite colour was red, now it's green.", "pat", "favourite:colour", "green"),
    ("Mac and cheese is Pat's favourite food.", "pat", "favourite:food", "mac and cheese"),
    (
        "Ana is really into chess, it's Ana's favourite game by far.",
        "ana",
        "favourite:game",
        "chess",
    ),
    # a blocking word in another clause about the subject's past
    ("Lou doesn't live in Leeds anymore, she moved to York.", "lou", "lives_in", "york"),
    ("Lou used to live in Leeds but now lives in York.", "lou", "lives_in", "york"),
    ("Lou left Globex and now works at Initech.", "lou", "works_at", "initech"),
    ("Lou, who used to live in Leeds, moved to York.", "lou", "lives_in", "york"),
    ("Lou moved to York in 2019, and moved back to Leeds in 2021.", "lou", "lives_in", "leeds"),
    # non-blocking intensifiers and stays after "has been"
    ("Lou finally moved to York.", "lou", "lives_in", "york"),
    (
        "Lou has been seeing Sam for a few weeks, it's getting serious.",
        "lou",
        "relationship",
        "dating:sam",
    ),
    ("Lou is on the team at Globex that nobody understands, ha.", "lou", "works_at", "globex"),
    # announcements and openers
    ("Big news: user moved to Porto!", "user", "lives_in", "porto"),
    ("Update: Lou is now based in York.", "lou", "lives_in", "york"),
    ("Guess what, Lou got engaged to Sam!", "lou", "relationship", "engaged:sam"),
    ("So, Lou moved to York.", "lou", "lives_in", "york"),
    ("Good news! Lou got a job at Initech.", "lou", "works_at", "initech"),
    ("Exciting news - Lou turned 30.", "lou", "age", "30"),
    ("Lou: Guess what, I moved to York!", "lou", "lives_in", "york"),
    # relationships
    ("Lou started dating Sam.", "lou", "relationship", "dating:sam"),
    ("Lou got back together with Sam.", "lou", "relationship", "dating:sam"),
    ("Lou and Sam got engaged.", "lou", "relationship", "engaged:sam"),
    ("Lou: Sam and I got married!", "lou", "relationship", "married:sam"),
    ("Lou is with Sam now, they met at work.", "lou", "relationship", "dating:sam"),
    ("Lou married her high school sweetheart, Sam.", "lou", "relationship", "married:sam"),
    ("Lou is single again after the breakup.", "lou", "relationship", "single"),
    # jobs
    ("Lou got hired by Initech.", "lou", "works_at", "initech"),
    ("Lou is on the design team at Initech.", "lou", "works_at", "initech"),
    ("Lou is a nurse at Mercy Hospital.", "lou", "works_at", "mercy hospital"),
    ("Lou accepted a position at Initech.", "lou", "works_at", "initech"),
    ("Lou works in marketing at Initech.", "lou", "works_at", "initech"),
    # places
    ("Lou moved from Leeds to York.", "lou", "lives_in", "york"),
    ("Lou settled in York.", "lou", "lives_in", "york"),
    ("Lou's new flat is in York.", "lou", "lives_in", "york"),
    ("Lou packed up and moved to York.", "lou", "lives_in", "york"),
    # trips
    ("Lou: We're planning a trip to Kyoto in April.", "lou", "plan:trip", "kyoto"),
    ("Lou booked flights to Lisbon.", "lou", "plan:trip", "lisbon"),
    ("Lou is planning a road trip to Yellowstone this summer.", "lou", "plan:trip", "yellowstone"),
    ("Lou is heading to Cornwall next month.", "lou", "plan:trip", "cornwall"),
    ("Lou is flying to Chicago on Friday for a conference.", "lou", "plan:trip", "chicago"),
    ("Lou has a trip to Rome coming up.", "lou", "plan:trip", "rome"),
    ("Lou's next trip is to Rome.", "lou", "plan:trip", "rome"),
    # ages
    ("Big news: Lou just turned 18!", "lou", "age", "18"),
    ("Lou had her 40th birthday on Sunday.", "lou", "age", "40"),
]

NEGATIVE = [
    # "she" or "her" may be someone else
    "Lou met Sam last year, he moved to Denver.",
    "Lou's sister called, she moved to Rome.",
    "Lou and her mom went shopping, she is 60.",
    "Lou visited her grandma, she turned 90 last week.",
    "Lou's brother, moved to York last year.",
    "Lou loves Radiohead, they're Sam's favourite band.",
    "Lou cooked lasagna, it's her mom's favourite dish.",
    "Lou: I love tacos, they're his favourite food.",
    # ellipsis under a hedge, a report, a relative clause
    "Lou wants to move to York and work at Initech.",
    "Lou met Sam, who works at Initech.",
    "Lou heard that Sam moved to York.",
    "Lou's friend said she moved to York.",
    # a hedge, an end, a change or another time in a later clause
    "Lou moved to York, but she might not stay.",
    "Lou moved to York. Or maybe not.",
    "Lou works at Initech, or so she says.",
    "Lou works at Initech, at least for now.",
    "Lou got hired by Initech but turned it down.",
    "Lou was hired by Initech back in 2015.",
    "Lou and Sam got married in 2010 but divorced in 2020.",
    "Lou's favourite colour is red, now it's green.",
    "Lou moved to York, then Leeds.",
    "Lou is into Muse, it's her favourite band after Radiohead.",
    "Lou lives in York, not Leeds.",
    # conditions and hedges before the fact
    "If she gets the job, Lou will move to Berlin.",
    "Unless something changes, Lou is moving to Berlin next month.",
    "Maybe Lou moved to York.",
    "Also, Lou works at Initech.",
    "No way, Lou got engaged to Sam!",
    # questions anywhere after the fact, or around it
    "Lou works at Initech, right?",
    "Lou works at Initech. Can you believe it?",
    # announcements are no speakers, speakers no announcements
    "Note: Lou doesn't live in York.",
    "Update: Lou might move to Berlin.",
    "assistant: Big news, you moved to Porto!",
    "Melanie: Caroline moved to Paris, she loves it.",
    # trips that are errands, events, the past, or someone else's
    "Lou is going to Taylor Swift next week.",
    "Lou is heading to Target tomorrow.",
    "Lou is off to Tesco.",
    "Lou went to Paris last month.",
    "Lou's mom booked flights to Lisbon.",
    "Lou booked flights to Lisbon for her mom.",
    "Lou would love to take a trip to Japan.",
    "Lou is also planning a trip to Rome.",
    "Lou cancelled her trip to Rome.",
    "Lou: I'm planning a camping weekend next month.",
    # relationships that are company, care or someone else's
    "Lou is with Sam at the mall.",
    "Lou is with Globex now.",
    "Lou is seeing Sam tonight.",
    "Lou has been seeing Dr. Smith for her back.",
    "Lou's parents got engaged.",
    "Lou and Sam are going to the cinema.",
    "Sam and Lou's sister got engaged.",
    # roles at a place that are no job
    "Lou is a regular at Fairmont Cafe.",
    "Lou is a member at Globex Gym.",
    "Lou is a master at Chess.",
    "Lou is the best player at Arsenal.",
    "Lou is a student at Stanford.",
    "Lou is on the soccer team at Ridgewood High.",
    "Lou works in the morning at Initech.",
    "Lou moved from Sales to Marketing.",
    # no fact at all
    "Lou finally cleaned out Lou's garage, three bags for charity.",
    "assistant: Two kids!",
    "Lou is really into pottery these days.",
    "Lou loves Paris and Rome, they're her favourite cities.",
    "Lou is obsessed with Paris, it's her favourite city in Europe.",
]


@pytest.mark.parametrize(("text", "subject", "relation", "value"), POSITIVE)
def test_reads_the_fact_in_its_clause(text: str, subject: str, relation: str, value: str) -> None:
    assert extract_fact(text) == Fact(subject, relation, value)


@pytest.mark.parametrize("text", NEGATIVE)
def test_reads_no_fact(text: str) -> None:
    assert extract_fact(text) is None


@pytest.mark.parametrize(("text", "subject", "relation", "value"), POSITIVE)
def test_an_assistant_line_or_a_question_is_still_no_fact(
    text: str, subject: str, relation: str, value: str
) -> None:
    assert extract_fact("assistant: " + text) is None
    assert extract_fact(text.rstrip(".!") + "?") is None


@pytest.mark.parametrize(
    ("text", "speaker", "body"),
    [
        ("Melanie: I moved.", "melanie", "I moved."),
        ("user: I moved.", "user", "I moved."),
        ("Anna Smith: I moved.", "anna smith", "I moved."),
        ("assistant: Congrats!", "assistant", "Congrats!"),
        ("Big news: Anna moved.", None, "Anna moved."),
        ("Update: user moved.", None, "user moved."),
        ("Fun fact: User is 34.", None, "User is 34."),
        ("big news: Anna moved.", None, "Anna moved."),
        ("Update: Melanie: I moved.", "melanie", "I moved."),
        ("Anna moved.", None, "Anna moved."),
    ],
)
def test_a_prefix_is_a_speaker_only_when_it_is_a_name(
    text: str, speaker: str | None, body: str
) -> None:
    assert split_prefix(text) == (speaker, body)


def test_clauses_end_at_punctuation_and_before_joining_words() -> None:
    body = "Marco used to live in Turin but now lives in Milan, which he loves. Or not?"
    clauses = split_clauses(body)
    texts = [body[c.start : c.end] for c in clauses]
    assert texts == ["Marco used to live in Turin", "now lives in Milan", "he loves", "not"]
    assert [c.joiners for c in clauses] == [(), ("but",), ("which",), ("or",)]
    assert [c.question for c in clauses] == [False, False, False, True]
    assert [c.sentence for c in clauses] == [0, 0, 0, 1]


def test_and_ends_a_clause_only_before_one() -> None:
    texts = [
        "Lou lives in Porto and Lisbon.",
        "Lou packed up and moved to York.",
        "Sam and I got married.",
    ]
    cuts = [len(split_clauses(t)) for t in texts]
    assert cuts == [1, 2, 2]


def test_abbreviations_do_not_end_a_sentence() -> None:
    body = "Lou works at Hollis & Co. in York. Sam is 30."
    assert [c.sentence for c in split_clauses(body)] == [0, 1]


def test_a_later_value_of_the_same_fact_wins_and_another_fact_comes_second() -> None:
    assert extract_fact("Lou moved to York and now works at Initech.") == Fact(
        "lou", "lives_in", "york"
    )
    text = "Lou moved to York in 2019, and moved back to Leeds in 2021."
    assert extract_fact(text) == Fact("lou", "lives_in", "leeds")


def test_a_long_text_is_no_single_fact_summary() -> None:
    text = "Lou moved to York. " + "The weather was nice and the food was good. " * 30
    assert len(text) > MAX_CHARS
    assert extract_fact(text) is None
    assert extract_fact(text[:200]) == Fact("lou", "lives_in", "york")
