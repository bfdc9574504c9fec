"""Answer shapes of the extractive answerer, each a grammar-level rule shown on several
paraphrases (issue #28, case 7):

* "when": a time the sentence states ("in March", "on June 3rd") beats the turn's timestamp;
* naming questions ("what is X called", "the name of X", "what did Y name X") get the name;
* "what <noun>" with a copula ("my favourite food is ramen", "ramen is my favourite food")
  gets the other side of the copula, and no answer is made of the question's own words.
"""

from __future__ import annotations

from datetime import datetime

import pytest
from hymem.llm.extractive.answer import Candidate, answers_type, extract_answer, question_type
from hymem.llm.extractive.scoring import normalised_tokens

SAID = datetime(2024, 6, 10, 10, 0)  # when every sentence below was said


def _answer(question: str, sentence: str, speaker: str | None = None) -> str:
    return extract_answer(question, Candidate(sentence, "s", time=SAID, speaker=speaker))


# --- when: the time the text states -----------------------------------------------------------


@pytest.mark.parametrize(
    ("question", "sentence", "expected"),
    [
        ("When did I move?", "I moved to Lisbon in March", "March"),
        ("When did the user move to Lisbon?", "User moved to Lisbon in March.", "March"),
        ("When did Dana start her new job?", "Dana started her new job on March 3.", "March 3"),
        ("When did they get married?", "We got married on the 12th of June.", "12th of June"),
        ("When did Sam adopt the puppy?", "In early May I adopted a puppy.", "early May"),
        ("When was Ana's recital?", "My recital was on 4 July, it went well.", "4 July"),
        (
            "When did Leo finish the marathon?",
            "Leo finished a marathon in late October.",
            "late October",
        ),
        ("When did Mia go to Rome?", "We went to Rome in the summer.", "summer"),
    ],
)
def test_when_prefers_a_time_the_text_states_over_the_turns_timestamp(
    question: str, sentence: str, expected: str
) -> None:
    assert _answer(question, sentence) == expected
    assert answers_type(question, expected)


@pytest.mark.parametrize(
    ("question", "sentence", "expected"),
    [
        # "may" the verb and "march" the verb are not months: the turn's day answers
        ("When did Ivo say he may move?", "I may move to Porto soon.", "10 June 2024"),
        ("When did the band march?", "The band will march through the town.", "10 June 2024"),
        # a full date or a resolved relative one still wins over a bare month
        ("When did Eva fly home?", "Eva flew home on 2 March 2024.", "2 March 2024"),
        ("When did Eva fly home?", "I flew home yesterday, in June.", "9 June 2024"),
    ],
)
def test_when_keeps_full_and_relative_dates_and_ignores_verbs_that_spell_months(
    question: str, sentence: str, expected: str
) -> None:
    assert _answer(question, sentence) == expected


# --- naming questions: the name -------------------------------------------------------------


@pytest.mark.parametrize(
    ("question", "sentence", "expected"),
    [
        (
            "What is Caroline's cat called?",
            "Caroline's cat Luna is afraid of thunderstorms.",
            "Luna",
        ),
        ("What is Caroline's cat called?", "Luna is afraid of thunderstorms.", "Luna"),
        ("What is the name of Melanie's dog?", "Melanie's dog is named Oliver.", "Oliver"),
        ("What's the name of Ann's puppy?", "Her puppy, Max, loves the beach.", "Max"),
        ("What did Sam name his turtle?", "I named my turtle Shelly after a cartoon.", "Shelly"),
        (
            "What do they call their boat?",
            "We call our boat Seabird because it is fast.",
            "Seabird",
        ),
        ("What is Jon's band called?", "My band is called The Night Owls.", "The Night Owls"),
        ("What is the book called?", 'The book is titled "Becoming Nicole".', '"Becoming Nicole"'),
        ("What is Tom's daughter's name?", "Tom's daughter Ella just turned five.", "Ella"),
    ],
)
def test_naming_questions_are_answered_with_the_name(
    question: str, sentence: str, expected: str
) -> None:
    assert _answer(question, sentence) == expected


def test_a_naming_question_skips_the_speaker_and_the_questions_own_names() -> None:
    assert _answer("What is Caroline's cat called?", "My cat is Luna.", speaker="Caroline") == (
        "Luna"
    )
    assert _answer("What is Caroline's cat named?", "Caroline said her cat is named Luna.") == (
        "Luna"
    )


# --- what <noun> with a copula; never the question's own words -------------------------------


@pytest.mark.parametrize(
    ("question", "sentence", "expected"),
    [
        ("What food does the user like?", "User's favourite food is ramen.", "ramen"),
        ("What food does the user like?", "Ramen is my favourite food.", "Ramen"),
        ("What color does Mia like?", "My favorite color has always been teal.", "teal"),
        ("What sport does the user enjoy?", "The user's favourite sport is tennis.", "tennis"),
        ("What drink does Omar prefer?", "Omar said green tea is his usual drink.", "green tea"),
        ("Which city does Kim love most?", "Her favourite city was Kyoto, by far.", "Kyoto"),
    ],
)
def test_what_noun_with_a_copula_answers_with_the_other_side(
    question: str, sentence: str, expected: str
) -> None:
    answer = _answer(question, sentence)
    assert answer == expected
    assert not set(normalised_tokens(answer)) <= set(normalised_tokens(question))


def test_an_evaluative_complement_does_not_replace_the_noun_phrase() -> None:
    """'The counseling workshop was great' names the workshop; 'great' does not."""
    assert _answer("What workshop did Caroline attend?", "The counseling workshop was great.") == (
        "counseling workshop"
    )


@pytest.mark.parametrize(
    ("question", "sentence"),
    [
        ("What food does the user like?", "User's favourite food is ramen."),
        ("What food does Ben like?", "Ben likes good food, his favourite food is pho."),
        ("What is Caroline's cat called?", "Caroline's cat Luna is afraid of thunderstorms."),
        ("What sport does Zoe play?", "Zoe plays sport every week: mostly squash."),
    ],
)
def test_the_answer_is_never_made_of_the_questions_own_words(question: str, sentence: str) -> None:
    answer = _answer(question, sentence)
    assert answer
    assert not set(normalised_tokens(answer)) <= set(normalised_tokens(question)), answer


def test_naming_questions_stay_what_questions() -> None:
    assert question_type("What is Caroline's cat called?") == "what"
    assert question_type("What did Sam name his turtle?") == "what"
