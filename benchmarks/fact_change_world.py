"""The fact-change world of `fact_change.py`: simulated users whose facts change, from a seed.

Pure and deterministic (`random.Random(seed)`, no model, no clock): each user has a handful of
slots (where they live, employer, job, age, favourites, pet, partner, next trip, kids), states
them over 8-12 chat sessions spread across about 18 months, restates some in other words and
changes others, among small talk with an assistant. Every slot keeps its timeline of
(value, said_at); questions about a slot are asked at several `as_of` moments, and the truth at
a moment is the last value said at or before it.

Every value of every pool is a distinctive token used nowhere else (not in another pool, a
name, small talk or a template), so a context can be checked by whole-word matching: a value
found in a context was retrieved, not made up by the wording around it.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Literal

from fact_change_templates import ACK, CONFIRM, KINDS
from fact_change_vocab import _NUMBER_WORDS, CLOSINGS, GREETINGS, NAMES, PETS, POOLS, SMALL_TALK

START = datetime(2023, 1, 9)
SPAN_DAYS = 540  # about 18 months of sessions per user
ASSISTANT = "assistant"
P_CHANGE, P_REPEAT, MAX_CHANGES = 0.2, 0.3, 3  # per slot and later session
CHANGE_WEIGHTS = {"age": 0.0, "kids": 0.08}  # ages change on birthdays only; babies are rarer


def _article(word: str) -> str:
    return ("an " if word[0].lower() in "aeiou" else "a ") + word


def _kids(n: int) -> str:
    return f"{_NUMBER_WORDS[n]} {'kid' if n == 1 else 'kids'}"


def aliases(kind: str, value: str) -> list[str]:
    """Every surface form of a value a context may hold (kids are said in words or digits)."""
    if kind != "kids":
        return [value]
    n = int(value)
    nouns = ("kid", "child") if n == 1 else ("kids", "children")
    return [f"{w} {noun}" for w in (_NUMBER_WORDS[n], str(n)) for noun in nouns]


def value_pattern(kind: str, value: str) -> re.Pattern[str]:
    """Whole words, any case; a number must not touch a digit, ':' or '-' (times, dates)."""
    forms = "|".join(re.escape(a) for a in aliases(kind, value))
    return re.compile(rf"(?<![\w:-])(?:{forms})(?![\w:]|-\d)", re.IGNORECASE)


@dataclass
class Event:
    """One statement of a slot's value: its first statement, a restatement or a change."""

    kind: Literal["first", "repeat", "change"]
    value: str
    session: int
    said_at: datetime = START  # the moment of the message that says it, set with the dialogue


@dataclass
class Slot:
    """One fact of a user with every statement of it, in order."""

    kind: str
    pet: str = ""  # the species, for the pet slot
    events: list[Event] = field(default_factory=list)

    @property
    def timeline(self) -> list[tuple[str, datetime]]:
        """(value, said_at) of the first statement and of each change."""
        return [(e.value, e.said_at) for e in self.events if e.kind != "repeat"]

    @property
    def values(self) -> list[str]:
        return [v for v, _ in self.timeline]

    def truth(self, at: datetime) -> str | None:
        """The last value said at or before `at` (None before the first statement)."""
        said = [v for v, t in self.timeline if t <= at]
        return said[-1] if said else None


@dataclass
class Session:
    id: str
    start: datetime
    messages: list[dict[str, str]]  # speaker, text, timestamp (ISO), as `Memory.add` takes them

    @property
    def end(self) -> datetime:
        return datetime.fromisoformat(self.messages[-1]["timestamp"])


@dataclass
class SimUser:
    user_id: str
    name: str  # the user's speaker name, used in the questions
    slots: dict[str, Slot]
    sessions: list[Session]


@dataclass(frozen=True)
class Question:
    user_id: str
    name: str
    kind: str
    moment: str  # "first" (after the first statement), "between" (changes) or "end"
    text: str
    as_of: datetime
    truth: str
    values: tuple[str, ...]  # every value the slot ever had, in order
    said_at: tuple[datetime, ...]  # when each of `values` was first said


@dataclass
class World:
    seed: int
    users: list[SimUser]
    questions: list[Question]


Turn = tuple[str, str]  # (speaker, text)
Block = tuple[Event | None, list[Turn]]  # turns said together; the event whose value they say


def check_pools() -> None:
    """Values are distinctive only if no value is in two pools, a name or any fixed line."""
    seen: dict[str, str] = {}
    for kind, pool in {**POOLS, "name": NAMES}.items():
        for v in pool:
            if v.lower() in seen:
                raise ValueError(f"{v!r} is in both {seen[v.lower()]} and {kind}")
            seen[v.lower()] = kind
    prose = [s for pair in SMALL_TALK + GREETINGS + CLOSINGS for s in pair] + CONFIRM + ACK
    for t in KINDS.values():
        prose += t.first + t.repeat + t.change + t.ask_repeat + t.ack_first + t.ack_change
        prose += t.questions
    for line in prose:
        for v, kind in seen.items():
            if re.search(rf"\b{re.escape(v)}\b", line, re.IGNORECASE):
                raise ValueError(f"{kind} value {v!r} appears in the line {line!r}")


class _UserBuilder:
    """One user's slots, their schedule and the dialogue, all drawn from one random stream."""

    def __init__(self, rng: random.Random, index: int, name: str) -> None:
        self.rng = rng
        self.user_id = f"user-{index:03d}"
        self.name = name
        first = START + timedelta(days=rng.randint(0, 60), hours=rng.randint(8, 20))
        weeks = sorted(rng.sample(range(1, SPAN_DAYS // 7), rng.randint(8, 12) - 1))
        self.starts = [first] + [
            first + timedelta(weeks=w, hours=rng.randint(-3, 3), minutes=rng.randint(0, 59))
            for w in weeks
        ]
        self.birthday = START + timedelta(days=rng.randint(30, 360))

    def values(self, kind: str, changes: int) -> list[str]:
        """The slot's values in order, all different: ages and kids count up by one."""
        if kind in ("age", "kids"):
            start = self.rng.randint(32, 60) if kind == "age" else self.rng.randint(1, 3)
            return [str(start + i) for i in range(changes + 1)]
        return self.rng.sample(POOLS[kind], changes + 1)

    def schedule(self, kind: str) -> list[tuple[int, str]]:
        """(session index, event) for one slot: a first statement, then repeats and changes.
        An age changes in the first session after a birthday, and only then."""
        rng, n = self.rng, len(self.starts)
        first = 0 if rng.random() < 0.6 else rng.randint(1, n // 2)
        plan = [(first, "first")]
        birthdays = [self.birthday.replace(year=self.birthday.year + y) for y in range(3)]
        changes = 0
        for s in range(first + 1, n):
            birthday = any(self.starts[s - 1] < b <= self.starts[s] for b in birthdays)
            if kind == "age" and birthday:
                plan.append((s, "change"))
                continue
            if changes < MAX_CHANGES and rng.random() < CHANGE_WEIGHTS.get(kind, P_CHANGE):
                plan.append((s, "change"))
                changes += 1
            elif rng.random() < P_REPEAT:
                plan.append((s, "repeat"))
        if kind not in CHANGE_WEIGHTS and changes == 0 and first < n - 1 and rng.random() < 0.6:
            s = rng.randint(first + 1, n - 1)  # most slots change at least once
            plan = [p for p in plan if p[0] != s] + [(s, "change")]
        return sorted(plan)

    def say(self, template: str, slot: Slot, value: str, old: str | None) -> str:
        def form(v: str) -> str:
            return _kids(int(v)) if slot.kind == "kids" else v

        text = template.format(
            v=form(value),
            a_v=_article(value),
            old=form(old) if old else "",
            a_old=_article(old) if old else "",
            pet=slot.pet,
        )
        return text[0].upper() + text[1:]

    def fact_turns(self, slot: Slot, event: Event, old: str | None) -> list[Turn]:
        """A user statement and the assistant's reply (an echo of the value half the time), or,
        for some restatements, the assistant bringing the value up and the user confirming."""
        t, rng, value = KINDS[slot.kind], self.rng, event.value
        if event.kind == "repeat" and rng.random() < 0.3:
            asked = self.say(rng.choice(t.ask_repeat), slot, value, old)
            return [(ASSISTANT, asked), (self.name, rng.choice(CONFIRM))]
        said = {"first": t.first, "repeat": t.repeat, "change": t.change}[event.kind]
        acks = {"first": t.ack_first, "repeat": [], "change": t.ack_change}[event.kind]
        if old is None:
            said = [p for p in said if "old}" not in p]
            acks = [a for a in acks if "old}" not in a]
        user = self.say(rng.choice(said), slot, value, old)
        echo = bool(acks) and rng.random() < 0.5
        reply = self.say(rng.choice(acks), slot, value, old) if echo else rng.choice(ACK)
        return [(self.name, user), (ASSISTANT, reply)]

    def build(self) -> SimUser:
        rng = self.rng
        kinds = rng.sample(sorted(KINDS), rng.randint(6, 8))
        slots = {k: Slot(kind=k, pet=rng.choice(PETS) if k == "pet" else "") for k in kinds}
        facts: list[list[Block]] = [[] for _ in self.starts]
        for slot in slots.values():
            plan = self.schedule(slot.kind)
            values = iter(self.values(slot.kind, sum(e == "change" for _, e in plan)))
            current: str | None = None
            for s, kind in plan:
                old = current
                current = next(values) if kind != "repeat" else current
                assert current is not None
                event = Event(kind, current, s)  # type: ignore[arg-type]
                slot.events.append(event)
                facts[s].append(
                    (event, self.fact_turns(slot, event, old if kind == "change" else None))
                )
        sessions = [self.session(i, blocks) for i, blocks in enumerate(facts)]
        return SimUser(self.user_id, self.name, slots, sessions)

    def session(self, index: int, facts: list[Block]) -> Session:
        """Greeting, small talk and the session's fact blocks in random order, maybe a goodbye;
        each message 30-150 s after the last, and each event stamped with its first message."""
        rng = self.rng

        def chat(pair: tuple[str, str]) -> Block:
            return (None, [(self.name, pair[0]), (ASSISTANT, pair[1])])

        blocks = [chat(p) for p in rng.sample(SMALL_TALK, rng.randint(3, 6))] + facts
        rng.shuffle(blocks)
        blocks.insert(0, chat(rng.choice(GREETINGS)))
        if rng.random() < 0.6:
            blocks.append(chat(rng.choice(CLOSINGS)))
        when, messages = self.starts[index], []
        for event, turns in blocks:
            if event is not None:
                event.said_at = when
            for speaker, text in turns:
                messages.append({"speaker": speaker, "text": text, "timestamp": when.isoformat()})
                when += timedelta(seconds=rng.randint(30, 150))
        return Session(f"{self.user_id}-s{index:02d}", self.starts[index], messages)


def questions_for(rng: random.Random, user: SimUser) -> list[Question]:
    """Per slot, 2-3 moments, each in the gap after a session: after the first statement;
    between changes (after an intermediate change or, with one change, a session while the
    first value held); after the last session. The same gap is never asked twice."""
    sessions = user.sessions
    nexts = [s.start for s in sessions[1:]] + [sessions[-1].end + timedelta(days=30)]

    def gap_after(i: int) -> datetime:
        span = (nexts[i] - sessions[i].end).total_seconds()
        return sessions[i].end + timedelta(seconds=int(span * rng.uniform(0.05, 0.9)))

    out: list[Question] = []
    for kind, slot in user.slots.items():
        stated = [e.session for e in slot.events if e.kind != "repeat"]
        chosen = {stated[0]: "first"}
        if len(stated) > 2:
            chosen[rng.choice(stated[1:-1])] = "between"
        elif len(stated) == 2 and stated[1] - stated[0] > 1:
            chosen[rng.randint(stated[0] + 1, stated[1] - 1)] = "between"
        chosen[len(sessions) - 1] = "end"
        for i, moment in sorted(chosen.items()):
            at = gap_after(i)
            truth = slot.truth(at)
            assert truth is not None
            text = rng.choice(KINDS[kind].questions).format(name=user.name, pet=slot.pet)
            values, said = zip(*slot.timeline, strict=True)
            q = Question(user.user_id, user.name, kind, moment, text, at, truth, values, said)
            out.append(q)
    return out


def statement_of(user: SimUser, q: Question) -> str:
    """The user's own turn that said the value true at `q.as_of` (its first statement or its
    last change by then), verbatim."""
    slot = user.slots[q.kind]
    event = [e for e in slot.events if e.kind != "repeat" and e.said_at <= q.as_of][-1]
    stamp = event.said_at.isoformat()
    return next(
        m["text"]
        for s in user.sessions
        for m in s.messages
        if m["timestamp"] == stamp and m["speaker"] == user.name
    )


def build_world(users: int = 20, seed: int = 0) -> World:
    """The whole suite for `users` simulated users; the same seed gives the same world."""
    check_pools()
    rng = random.Random(seed)
    names = rng.sample(NAMES, min(users, len(NAMES)))
    while len(names) < users:  # more users than names: an initial tells them apart
        names.append(f"{rng.choice(NAMES)} {chr(ord('A') + len(names) % 26)}.")
    built = [_UserBuilder(rng, i, name).build() for i, name in enumerate(names)]
    return World(seed, built, [q for u in built for q in questions_for(rng, u)])
