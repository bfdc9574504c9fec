"""How the fact-change world's users and assistant talk about each slot kind: first
statements, restatements in other words, changes, the assistant's echoes and the questions
(`fact_change_world.py` fills them in)."""

from __future__ import annotations

from dataclasses import dataclass


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
