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

START = datetime(2023, 1, 9)
SPAN_DAYS = 540  # about 18 months of sessions per user
ASSISTANT = "assistant"
P_CHANGE, P_REPEAT, MAX_CHANGES = 0.2, 0.3, 3  # per slot and later session
CHANGE_WEIGHTS = {"age": 0.0, "kids": 0.08}  # ages change on birthdays only; babies are rarer
_NUMBER_WORDS = ["zero", "one", "two", "three", "four", "five", "six"]

# fmt: off
NAMES = [
    "Dana", "Robin", "Casey", "Morgan", "Avery", "Quinn", "Riley", "Harper", "Rowan", "Emery",
    "Sasha", "Jamie", "Taylor", "Blake", "Drew", "Reese", "Skyler", "Parker", "Hayden", "Kendall",
    "Finley", "Ellis", "Marley", "Shay", "Toby", "Nico", "Alexis", "Jules", "Remy", "Sage",
    "Frankie", "Lane", "Devon", "Corey", "Kit", "Brett", "Logan", "Peyton", "Ari", "Charlie",
]
POOLS: dict[str, list[str]] = {
    "home": [
        "Porto", "Lisbon", "Seville", "Valencia", "Bilbao", "Lyon", "Marseille", "Bordeaux",
        "Toulouse", "Munich", "Hamburg", "Leipzig", "Cologne", "Vienna", "Graz", "Zurich",
        "Geneva", "Antwerp", "Rotterdam", "Utrecht", "Copenhagen", "Aarhus", "Gothenburg",
        "Oslo", "Bergen", "Helsinki", "Tallinn", "Riga", "Krakow", "Gdansk", "Prague", "Brno",
        "Budapest", "Ljubljana", "Zagreb", "Dublin", "Galway", "Edinburgh", "Glasgow",
        "Manchester", "Leeds", "Bristol", "Denver", "Portland", "Austin", "Seattle", "Montreal",
        "Toronto", "Vancouver", "Melbourne", "Adelaide", "Auckland",
    ],
    "employer": [
        "Globex", "Initech", "Hooli", "Vandelay", "Contoso", "Fabrikam", "Northwind",
        "Cyberdyne", "Tyrell", "Brightlane", "Corvida", "Zentrix", "Quillon", "Veltrio",
        "Oakmere", "Pinnacore", "Lumora", "Starvane", "Halcyra", "Tessaro", "Marbleton",
        "Nordvik", "Wexford Labs", "Calloway", "Dunmore",
    ],
    "job": [
        "pharmacist", "paramedic", "cartographer", "sommelier", "actuary", "locksmith",
        "architect", "librarian", "veterinarian", "translator", "electrician", "dentist",
        "journalist", "firefighter", "physiotherapist", "accountant", "carpenter",
        "photographer", "surveyor", "midwife", "geologist", "animator", "statistician",
        "optician", "upholsterer",
    ],
    "food": [
        "ramen", "paella", "pierogi", "lasagna", "bibimbap", "falafel", "tiramisu", "gnocchi",
        "shakshuka", "moussaka", "pho", "risotto", "ceviche", "goulash", "enchiladas",
        "jambalaya", "katsu", "biryani", "empanadas", "baklava",
    ],
    "band": [
        "Radiohead", "Metallica", "Coldplay", "Portishead", "Gorillaz", "Nirvana", "Pixies",
        "Interpol", "Slowdive", "Khruangbin", "Stereolab", "Wilco", "Alvvays", "Bonobo",
        "Mogwai", "Fleetwood Mac", "Daft Punk", "Arcade Fire", "Tame Impala", "Massive Attack",
    ],
    "sport": [
        "badminton", "curling", "lacrosse", "fencing", "rowing", "handball", "volleyball",
        "rugby", "bouldering", "triathlon", "archery", "judo", "karate", "kayaking", "netball",
        "hurling", "table tennis", "water polo", "ultimate frisbee", "speed skating",
    ],
    "book": [
        "Dune", "Middlemarch", "Frankenstein", "Dracula", "Neuromancer", "Siddhartha",
        "Kindred", "Solaris", "Beloved", "Persuasion", "Ulysses", "Ivanhoe", "Hyperion",
        "Gilead", "Circe", "Moby Dick", "Wuthering Heights", "Watership Down", "Anna Karenina",
        "Don Quixote",
    ],
    "pet": [
        "Biscuit", "Pickles", "Mochi", "Waffles", "Noodle", "Ziggy", "Bruno", "Pumpkin",
        "Clementine", "Gizmo", "Nacho", "Tofu", "Juniper", "Rocket", "Pretzel", "Sprout",
        "Truffle", "Marzipan", "Chutney", "Pippin", "Wasabi", "Gnocchetto", "Fudge", "Bagel",
    ],
    "partner": [
        "Marco", "Priya", "Tomas", "Ingrid", "Kenji", "Amara", "Luca", "Sofia", "Rafael",
        "Noor", "Felix", "Yara", "Mateo", "Hana", "Dmitri", "Leila", "Oskar", "Ines", "Jonah",
        "Mira", "Anton", "Zeynep", "Bastian", "Chiara",
    ],
    "trip": [
        "Iceland", "Patagonia", "Japan", "Morocco", "Peru", "Vietnam", "Kenya", "Norway",
        "Croatia", "Mexico", "Tasmania", "Sicily", "Sardinia", "Bali", "Namibia", "Mongolia",
        "Chile", "Madeira", "the Azores", "Crete", "Tuscany", "Cuba", "Laos", "Slovenia",
    ],
}
# fmt: on
PETS = ["dog", "cat", "rabbit", "parrot"]


@dataclass(frozen=True)
class Templates:
    """How one slot kind is talked about. `{v}` is the value (`{a_v}` with its article), `{old}`
    the value it replaces, `{pet}` the pet's species; `ack_*` are the assistant's echoes."""

    first: list[str]
    repeat: list[str]
    change: list[str]
    ask_repeat: list[str]  # the assistant brings the value up; the user confirms
    ack_first: list[str]
    ack_change: list[str]
    questions: list[str]


# The user's answers to an assistant's "still ...?" question: they confirm without the value.
CONFIRM = [
    "Yep, still the same.",
    "Yes! Nothing has changed there.",
    "Ha, yes, still.",
    "Yeah, same as before.",
    "Mm-hm, no news on that front.",
    "Yes, all good there.",
]
# Assistant replies that acknowledge a statement without repeating it.
ACK = [
    "Oh nice, thanks for telling me!",
    "That sounds like a lot, how are you feeling about it?",
    "Good to know. Anything else new?",
    "Wow, okay! Tell me more whenever you like.",
    "That's great to hear.",
    "Got it. Sounds like things are moving along.",
    "Oh interesting! How did that come about?",
    "I love hearing these updates.",
    "Fair enough! How's everything else?",
    "Noted, and congratulations on keeping it all going.",
]

KINDS: dict[str, Templates] = {
    "home": Templates(
        first=[
            "I live in {v}, have done for a few years now.",
            "Things are pretty quiet here in {v} this time of year.",
            "I've been living in {v} since I finished university.",
            "{v} has been home for a while, I really like it here.",
            "My flat in {v} is tiny but it's close to everything.",
            "Honestly {v} is a great place to live if you like walking everywhere.",
        ],
        repeat=[
            "The trams in {v} were a mess this morning again.",
            "There's a street food market here in {v} this weekend, can't wait.",
            "Still loving life in {v}, even with the rent going up.",
            "Everyone in {v} seems to be out on their balconies today.",
            "My neighbour in {v} keeps leaving cake on my doorstep, not complaining.",
            "I took the long way home through the old town of {v} tonight.",
        ],
        change=[
            "We finally moved to {v} last week! Boxes everywhere.",
            "Big news, I'm living in {v} now. The move went smoother than expected.",
            "I left {old} for good, I'm in {v} now.",
            "Just got the keys to a place in {v}, so that's home now.",
            "Moved from {old} to {v} over the weekend, my back is destroyed.",
            "New city, new me: we relocated to {v} at the start of the month.",
            "So we did it, we packed up {old} and moved to {v}.",
        ],
        ask_repeat=["Are you still in {v}?", "How's life in {v} treating you these days?"],
        ack_first=["{v} sounds lovely.", "Oh, {v}! I've heard the food there is great."],
        ack_change=[
            "A move to {v}, that's huge! How's the new place?",
            "Congrats on the move to {v}! Do you miss {old} at all?",
        ],
        questions=[
            "Where does {name} live these days?",
            "Which city is {name} living in?",
            "What city is {name} based in right now?",
            "Where is {name}'s home at the moment?",
        ],
    ),
    "employer": Templates(
        first=[
            "I work at {v}, it's a decent place.",
            "I've been at {v} for about three years.",
            "Work at {v} is hectic this month, big deadline.",
            "My company, {v}, just announced a four-day week pilot.",
            "I'm on the team at {v} that nobody understands, ha.",
        ],
        repeat=[
            "Long day at {v} again, meetings back to back.",
            "{v} is doing another reorg, fun times.",
            "We had the summer party at {v} yesterday, it was actually fun.",
            "My manager at {v} finally approved my holiday.",
            "The coffee machine at {v} broke and everyone is miserable.",
        ],
        change=[
            "I left {old}, I'm at {v} now.",
            "Started a new job at {v} on Monday, new badge and everything.",
            "I finally quit {old}. {v} made me an offer I couldn't refuse.",
            "First week at {v} done! So different from my last place.",
            "Quick update: I switched companies, I work for {v} now.",
            "After five years I said goodbye to {old} and joined {v}.",
        ],
        ask_repeat=["How are things at {v}?", "Still enjoying the job at {v}?"],
        ack_first=["{v} sounds like a busy place!", "Is {v} a big company?"],
        ack_change=[
            "Congrats on {v}! How are your new colleagues?",
            "So long {old}, hello {v}! Exciting.",
        ],
        questions=[
            "Who does {name} work for?",
            "Where is {name} working now?",
            "Which company employs {name}?",
            "What company is {name} at these days?",
        ],
    ),
    "job": Templates(
        first=[
            "I'm {a_v}, so my hours are all over the place.",
            "I work as {a_v}, have done since my twenties.",
            "Being {a_v} is more paperwork than people think.",
            "As {a_v} I get asked for free advice at every party.",
        ],
        repeat=[
            "Typical {v} week, one thing after another.",
            "People always assume being {a_v} is boring. It isn't!",
            "Had a training day for work, surprisingly useful for {a_v}.",
            "Still enjoying being {a_v}, most days anyway.",
        ],
        change=[
            "I retrained as {a_v}, just got my certificate!",
            "I'm not {a_old} anymore, I'm working as {a_v} now.",
            "Career change update: I'm officially {a_v}.",
            "Left the {old} life behind, I started as {a_v} this month.",
            "Guess who's {a_v} now? Me! Finally made the switch.",
        ],
        ask_repeat=["Are you still working as {a_v}?", "How's the {v} work going?"],
        ack_first=["{a_v}! That must keep you busy.", "I didn't know you were {a_v}."],
        ack_change=["From {old} to {v}, what a switch!", "{a_v} now, congratulations!"],
        questions=[
            "What does {name} do for a living?",
            "What is {name}'s job?",
            "What's {name}'s profession these days?",
            "What kind of work does {name} do?",
        ],
    ),
    "age": Templates(
        first=[
            "I'm {v}, if you can believe it.",
            "At {v} I'm definitely too old for all-nighters.",
            "I'm {v} and I still can't cook rice properly.",
            "Turns out at {v} your knees start having opinions.",
        ],
        repeat=[
            "Being {v} means my back hurts after gardening, sadly.",
            "My niece keeps telling me {v} is ancient.",
            "I joined a running club, at {v}! Never too late.",
        ],
        change=[
            "I turned {v} yesterday!",
            "It was my birthday on Saturday, I'm {v} now.",
            "Officially {v} as of this week.",
            "Just hit {v}, we celebrated with a picnic.",
            "Another year older, {v} now, and I feel fine about it.",
        ],
        ask_repeat=["You're {v}, right? Not that it matters!"],
        ack_first=["{v} is a great age.", "Plenty of people start new things at {v}!"],
        ack_change=[
            "Happy birthday! {v} suits you.",
            "{v}! Happy birthday, did you do anything fun?",
        ],
        questions=[
            "How old is {name}?",
            "What age is {name} now?",
            "How old is {name} at this point?",
        ],
    ),
    "food": Templates(
        first=[
            "My favourite food is {v}, hands down.",
            "I could eat {v} every single day.",
            "Nothing beats a good {v} after a long week.",
            "If I had to pick one meal forever it'd be {v}.",
        ],
        repeat=[
            "Had {v} for dinner again, no regrets.",
            "Found a new place that does amazing {v}.",
            "Still the best thing ever: {v}.",
            "I tried making {v} at home, it was close to the real thing.",
        ],
        change=[
            "Weirdly I'm over {old}, {v} is my favourite now.",
            "New favourite dish: {v}. I've had it three times this week.",
            "These days {v} is my go-to comfort food.",
            "My friend got me hooked on {v}, it's my number one now.",
            "Forget {old}, I'm all about {v} now.",
        ],
        ask_repeat=["Still eating your body weight in {v}?"],
        ack_first=["{v} is a solid choice.", "Mmm, {v}. Good taste."],
        ack_change=["{v} over {old}? Bold move.", "{v}, nice! Where do you get it?"],
        questions=[
            "What is {name}'s favourite food?",
            "Which dish does {name} like most?",
            "What's {name}'s favourite thing to eat right now?",
        ],
    ),
    "band": Templates(
        first=[
            "{v} is my all-time favourite band.",
            "I've been listening to {v} nonstop, they're my favourite band.",
            "Nobody comes close to {v} for me, musically.",
            "My favourite band? {v}, easily.",
        ],
        repeat=[
            "Put {v} on during the drive, perfect as always.",
            "{v} announced a new album, I'm so excited.",
            "My playlist is basically just {v} at this point.",
        ],
        change=[
            "I've moved on from {old}, {v} is my favourite band now.",
            "Saw {v} live and now they're my number one band.",
            "My new favourite band is {v}, I can't stop listening.",
            "Sorry {old}, you've been replaced: {v} is the one now.",
        ],
        ask_repeat=["Still listening to {v} all the time?"],
        ack_first=["{v}! Great band.", "Oh, I like {v} too."],
        ack_change=["{v} over {old}? Interesting switch!", "{v} live must have been amazing."],
        questions=[
            "What is {name}'s favourite band?",
            "Which band does {name} like best?",
            "What band is {name} into most at the moment?",
        ],
    ),
    "sport": Templates(
        first=[
            "My favourite sport is {v}, I play every Tuesday.",
            "I'm really into {v}, it's my favourite sport by far.",
            "Nothing makes me happier than a {v} session.",
        ],
        repeat=[
            "Had {v} practice last night, I'm sore all over.",
            "Our {v} team finally won a match!",
            "I watched the {v} championship on my laptop.",
        ],
        change=[
            "I've fallen for {v}, it's my favourite sport now.",
            "Gave up {old}, {v} is my thing these days.",
            "Signed up for a {v} club, it's so much more fun than {old}.",
            "Honestly {v} is my new favourite sport.",
        ],
        ask_repeat=["Still playing {v}?"],
        ack_first=["{v} is great exercise.", "I didn't know you played {v}!"],
        ack_change=["{v} now? Fun!", "From {old} to {v}, nice change."],
        questions=[
            "What is {name}'s favourite sport?",
            "Which sport does {name} love most?",
            "What sport is {name} into these days?",
        ],
    ),
    "book": Templates(
        first=[
            "My favourite book is {v}, I reread it every year.",
            "{v} is the book I'd save from a fire.",
            "Nothing has ever topped {v} for me.",
        ],
        repeat=[
            "Started rereading {v}, it's still perfect.",
            "Got a fancy hardback of {v} for my shelf.",
            "I keep recommending {v} to everyone at work.",
        ],
        change=[
            "I finished {v} and it's my new favourite book.",
            "Move over {old}, {v} is my favourite now.",
            "I think {v} has overtaken everything else I've read.",
            "Book club picked {v} and now it's my all-time favourite.",
        ],
        ask_repeat=["Still rereading {v}?"],
        ack_first=["{v} is a classic.", "I can see why you love {v}."],
        ack_change=["{v} over {old}! High praise.", "{v} is a wonderful pick."],
        questions=[
            "What is {name}'s favourite book?",
            "Which book does {name} love most?",
            "What book does {name} rate above all others?",
        ],
    ),
    "pet": Templates(
        first=[
            "My {pet} {v} woke me up at five again.",
            "Our {pet} is called {v}, the cutest thing alive.",
            "{v}, my {pet}, chewed through a cable yesterday.",
            "I can't work from home because {v} the {pet} wants attention.",
        ],
        repeat=[
            "{v} is asleep on my feet right now.",
            "Took {v} to the vet, all healthy!",
            "{v} stole a sock and ran around the flat with it.",
        ],
        change=[
            "Sad news, {old} went to live on my parents' farm. We adopted a rescue {pet}, {v}.",
            "We have a new {pet}! The name is {v}.",
            "We renamed the {pet}, {old} never suited the little guy. It's {v} now.",
            "Meet {v}, our new {pet}. The house feels alive again.",
        ],
        ask_repeat=["How's {v} doing?", "Is {v} still causing trouble?"],
        ack_first=["{v} is such a cute name!", "Aww, give {v} a scratch from me."],
        ack_change=["Welcome home, {v}!", "{v} is a lovely name for a {pet}."],
        questions=[
            "What is the name of {name}'s {pet}?",
            "What's {name}'s {pet} called?",
            "What does {name} call their {pet}?",
        ],
    ),
    "partner": Templates(
        first=[
            "I've been dating {v} for a few months, it's going well.",
            "My partner {v} made dinner last night.",
            "{v} and I are going to a wedding this weekend.",
            "{v} thinks I work too much, and is probably right.",
        ],
        repeat=[
            "{v} and I just got engaged!",
            "{v} surprised me with concert tickets.",
            "Spent the whole weekend hiking with {v}.",
            "{v} and I finally agreed on a sofa.",
        ],
        change=[
            "{old} and I broke up last month. I'm seeing someone new now, {v}.",
            "I've been seeing {v} for a couple of months, it's getting serious.",
            "Love life update: {old} and I split, and I'm with {v} now.",
            "Met someone at a friend's party, {v}. We're officially together.",
        ],
        ask_repeat=["How are you and {v} doing?", "Is {v} coming with you?"],
        ack_first=["You and {v} sound great together.", "That's sweet of {v}."],
        ack_change=["I'm happy for you and {v}.", "Sorry about {old}, but {v} sounds lovely."],
        questions=[
            "Who is {name}'s partner?",
            "Who is {name} seeing these days?",
            "Who is {name} in a relationship with?",
        ],
    ),
    "trip": Templates(
        first=[
            "We're planning a trip to {v} next month.",
            "Booked flights to {v} for next month!",
            "Counting the days until our trip to {v}.",
        ],
        repeat=[
            "Bought hiking boots for {v}, breaking them in now.",
            "I've been reading guidebooks about {v} every night.",
            "Still can't believe we're going to {v} soon.",
        ],
        change=[
            "Change of plans, we cancelled {old} and we're going to {v} instead.",
            "The {old} trip fell through, so we booked {v}.",
            "Next up is {v}, we fly in a few weeks.",
            "We just booked {v} for our next holiday!",
        ],
        ask_repeat=["Are you all set for {v}?"],
        ack_first=["{v} will be amazing!", "Ooh, {v}! Pack sunscreen."],
        ack_change=["{v} instead of {old}? Good call.", "{v} sounds like a great trip."],
        questions=[
            "Where is {name} planning to travel next?",
            "What trip does {name} have coming up?",
            "Where is {name}'s next trip?",
        ],
    ),
    "kids": Templates(
        first=[
            "I have {v}, so weekends are chaos.",
            "With {v} at home I never finish a hot coffee.",
            "Being a parent of {v} is the best and hardest thing.",
        ],
        repeat=[
            "Finding a babysitter for {v} on a Saturday is impossible.",
            "School runs with {v} are my cardio now.",
        ],
        change=[
            "The baby arrived last week! So we have {v} now.",
            "We welcomed a baby girl on Tuesday, which makes {v}.",
            "Our little boy was born on Friday, that's {v} in the house.",
        ],
        ask_repeat=["How are your {v} doing?"],
        ack_first=["{v}! You must be busy.", "Wow, {v}. You deserve a nap."],
        ack_change=["Congratulations! {v} now, what a household.", "A new baby! Congrats!"],
        questions=[
            "How many kids does {name} have?",
            "How many children does {name} have now?",
            "How many kids are in {name}'s family?",
        ],
    ),
}

SMALL_TALK = [
    (
        "It's been raining nonstop all week, I'm so tired of grey skies.",
        "Rainy weeks are rough. A warm drink and a good blanket help.",
    ),
    ("Finally some sunshine today, I ate lunch outside.", "Lunch in the sun is the best."),
    (
        "I started a new show last night, it's a slow-burn detective thing.",
        "Those can be so addictive once they get going.",
    ),
    (
        "Did you know octopuses have three hearts? I read that today.",
        "They really are strange and wonderful creatures.",
    ),
    (
        "I tried baking bread again and it came out like a brick.",
        "Bread is tricky! Maybe the dough needed a longer rise.",
    ),
    (
        "My plants are thriving since I moved them closer to the window.",
        "More light makes such a difference.",
    ),
    (
        "I'm thinking about learning to knit, it looks relaxing.",
        "It is! Start with a simple scarf.",
    ),
    ("The neighbours had a party until two in the morning.", "Oof, that sounds exhausting."),
    (
        "I've been trying to drink more water, it's harder than it sounds.",
        "A bottle on your desk helps a lot.",
    ),
    (
        "Watched a documentary about deep sea fish, so weird and cool.",
        "The deep sea is basically another planet.",
    ),
    (
        "I burnt the onions while making soup, the whole kitchen smells.",
        "Open a window and light a candle, it'll pass.",
    ),
    (
        "Any tips for sleeping better? I keep waking up at three.",
        "Try keeping screens away for an hour before bed.",
    ),
    ("I finally cleaned out my wardrobe, three bags for charity.", "That must feel so good."),
    (
        "The new season of my favourite baking competition started.",
        "Those shows are so comforting to watch.",
    ),
    ("It's windy enough to knock you over out there.", "Stay inside if you can!"),
    (
        "I've been doing a jigsaw puzzle of a lighthouse, a thousand pieces.",
        "Puzzles are great for switching your brain off.",
    ),
    ("My phone screen cracked this morning, of course.", "Oh no, that's so annoying."),
    ("I made a huge pot of vegetable soup for the week.", "Batch cooking is a lifesaver."),
    ("Went for a long walk by the river, saw a heron.", "Herons are so elegant."),
    ("I'm trying to read more before bed instead of scrolling.", "That's a great habit."),
    ("The heating in my building broke again.", "I hope they fix it quickly."),
    ("I've been learning a few chords on the ukulele.", "Fun! Which song are you practising?"),
    ("Made pancakes this morning, a rare weekend treat.", "Pancakes make any morning better."),
    ("It snowed a little overnight, everything looks magical.", "Snow mornings are special."),
    ("I signed up for a pottery class, first lesson is next week.", "Pottery is so satisfying."),
    ("Spent the evening sorting old photos.", "That can bring back lots of memories."),
    ("I can't decide whether to repaint the kitchen.", "A fresh colour can change a room."),
    (
        "Just finished a podcast series about an old shipwreck.",
        "Shipwreck stories are fascinating.",
    ),
    ("Our street is getting new trees planted.", "That will look lovely in a few years."),
    ("I've been getting into crosswords, the hard ones defeat me.", "Keep at it, they get easier."),
    (
        "Today was one of those days where nothing went right.",
        "Sorry to hear that. Tomorrow's new.",
    ),
    ("I reorganised my desk and feel weirdly productive.", "A tidy desk really helps."),
    ("There was a double rainbow over the hills this evening.", "How lucky to see that."),
    ("I watched an old black and white film, loved it.", "Old films have such charm."),
    ("Trying a new soup recipe with lentils tonight.", "Lentils are so versatile."),
    ("I keep forgetting to water the basil on the windowsill.", "Maybe set a reminder?"),
]
GREETINGS = [
    ("Hey! Long time no chat.", "Hi! Great to hear from you. What's new?"),
    ("Morning!", "Good morning! How are you doing?"),
    ("Hi there, got a minute?", "Of course, what's up?"),
    ("Evening! Quick catch-up?", "Always. How's your week been?"),
    ("Hello again!", "Hello! How have things been?"),
]
CLOSINGS = [
    ("Anyway, I should get going.", "Talk soon! Take care."),
    ("Okay, that's all my news.", "Thanks for the catch-up!"),
    ("Right, dinner time. Bye!", "Enjoy your dinner!"),
]


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


def build_world(users: int = 20, seed: int = 0) -> World:
    """The whole suite for `users` simulated users; the same seed gives the same world."""
    check_pools()
    rng = random.Random(seed)
    names = rng.sample(NAMES, min(users, len(NAMES)))
    while len(names) < users:  # more users than names: an initial tells them apart
        names.append(f"{rng.choice(NAMES)} {chr(ord('A') + len(names) % 26)}.")
    built = [_UserBuilder(rng, i, name).build() for i, name in enumerate(names)]
    return World(seed, built, [q for u in built for q in questions_for(rng, u)])
