"""The words of the fact-change world (`fact_change_world.py`): names, the value pools of
each slot kind, pets, and the small talk around the facts. Every pool value is a distinctive
token used nowhere else, so contexts can be checked by whole-word matching."""

from __future__ import annotations

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
