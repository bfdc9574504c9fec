"""The word lists the fact reader relies on, in one place so each can be read and extended."""

from __future__ import annotations

from hymem.facts.text import wordset

# Function words and sentence openers: a capitalised one is no name ("The", "Then", "She").
NOT_NAMES = wordset(
    """a an the this that these those there here it its he she they them his her hers their
    theirs him we us our ours you your yours i me my mine who whom whose what which where when
    why how and or but so then now today tonight yesterday tomorrow also just still after
    before while if because since though although once yes no not oh ok okay well wow hey hi
    hello thanks thank congrats congratulations sure great nice good glad sorry please maybe
    perhaps is are was were am be been do does did can could will would should shall may
    might must have has had let lets last next every each all both some any many much most
    other another such one two three in on at to of for from with by about into over under
    as like than"""
)
# Nationalities, languages and faiths are capitalised but are no person ("her wife is Irish").
DEMONYMS = wordset(
    """american british english french german italian spanish portuguese brazilian mexican
    canadian chinese japanese korean indian irish scottish welsh dutch swedish norwegian
    danish finnish polish russian ukrainian greek turkish israeli jewish muslim christian
    catholic protestant buddhist hindu australian african nigerian kenyan egyptian moroccan
    argentinian argentine colombian peruvian chilean cuban filipino vietnamese thai
    indonesian pakistani iranian persian arab arabic lebanese swiss austrian belgian czech
    hungarian romanian european asian latina latino latinx hispanic black white"""
)
# Speakers whose lines are never the user's own statement of a fact.
NON_HUMAN_SPEAKERS = wordset("assistant ai bot chatbot system model agent gpt llm")
# Pet words -> the animal a pet relation is keyed by.
ANIMALS = {
    "dog": "dog",
    "puppy": "dog",
    "cat": "cat",
    "kitten": "cat",
    "rabbit": "rabbit",
    "bunny": "rabbit",
    "hamster": "hamster",
    "parrot": "parrot",
    "bird": "bird",
    "fish": "fish",
    "goldfish": "fish",
    "turtle": "turtle",
    "tortoise": "tortoise",
    "snake": "snake",
    "lizard": "lizard",
    "gecko": "gecko",
    "horse": "horse",
    "pony": "horse",
    "ferret": "ferret",
}


def _plural_table(spec: str) -> dict[str, str]:
    """ "kids: kid kids child children" -> every form maps to "kids"."""
    table: dict[str, str] = {}
    for line in spec.strip().splitlines():
        key, forms = line.split(":")
        for form in forms.split():
            table[form] = key.strip()
    return table


# Things people count that stay counted ("has two kids", "three cats"): form -> key.
COUNTED_THINGS = _plural_table(
    """
    kids: kid kids child children
    sons: son sons
    daughters: daughter daughters
    grandkids: grandkid grandkids grandchild grandchildren
    siblings: sibling siblings
    brothers: brother brothers
    sisters: sister sisters
    cars: car cars
    bikes: bike bikes bicycle bicycles
    motorcycles: motorcycle motorcycles motorbike motorbikes
    cats: cat cats kitten kittens
    dogs: dog dogs puppy puppies
    pets: pet pets
    horses: horse horses
    chickens: chicken chickens
    houses: house houses
    roommates: roommate roommates flatmate flatmates
    tattoos: tattoo tattoos
    """
)
# Words between a count and its thing that make the count partial ("two more kids").
PARTIAL_COUNT = wordset("more new other extra additional foster step of older younger")
# Partner nouns -> the status a relationship value records.
PARTNER_ROLES = {
    "girlfriend": "dating",
    "boyfriend": "dating",
    "partner": "partner",
    "wife": "married",
    "husband": "married",
    "fiance": "engaged",
    "fiancé": "engaged",
    "fiancee": "engaged",
    "fiancée": "engaged",
}
# Nouns after "Name's" that make it a possessive ("Caroline's wife") rather than the
# contraction of "is"/"has" ("Caroline's moving", "Caroline's 34").
POSSESSED = (
    wordset(
        """favourite favorite all-time absolute current new home job position role title age
        little young rescue baby next upcoming"""
    )
    | frozenset(ANIMALS)
    | frozenset(PARTNER_ROLES)
)
# Job-title values that are no job ("works as a team", "works as a volunteer").
NOT_JOBS = wordset("team volunteer well hard usual expected result favour favor hobby one unit")
# Roles "at" a place that are no employment ("is a regular at Fairmont Cafe").
NOT_EMPLOYEES = wordset(
    """member customer volunteer beginner newcomer stranger regular visitor foreigner outsider
    passenger speaker winner runner student resident patient parent client tenant participant
    contestant guest user lover follower supporter subscriber attendee believer master pro
    expert natural wizard genius legend newbie hit star champion whiz ace"""
)
# Words that open an announcement, not a speaker's line ("Big news: ...", "Update: ...").
ANNOUNCEMENTS = wordset(
    """news update updates guess fyi note ps reminder breaking alert heads psa edit summary
    context background fact spoiler twist tldr btw correction important aside sidenote
    side lol wow yay omg oh so well okay ok anyway honestly also plus quick random big huge
    exciting happy sad bad good great amazing awesome"""
)
# Words that open a clause without changing what it says ("So, Keiko moved ...").
DISCOURSE = wordset(
    "so well anyway anyways oh okay ok btw honestly basically yeah yes wow lol haha ha"
)
# Nouns after "her"/"his"/"my" that make a clause about someone else ("her sister might visit").
OTHERS = wordset(
    """sister sisters brother brothers mom mum mother dad father parents kids children son sons
    daughter daughters friend friends boss husband wife boyfriend girlfriend family neighbour
    neighbours neighbor neighbors roommate roommates flatmate colleague colleagues coworker
    coworkers cousin cousins aunt uncle grandma grandmother grandpa grandfather grandparents
    baby team company landlord doctor therapist nurse teacher manager ex nan granny mom's
    mother-in-law father-in-law niece nephew godmother stepmom stepdad partner's"""
)
# Capitalised words after "moved to" that are departments, not places ("moved to Marketing").
NOT_PLACES = wordset(
    """sales marketing engineering finance hr legal support design product operations
    accounting admin management research it ops security"""
)
# Teams that are no employer ("is on the soccer team at Ridgewood High").
HOBBY_TEAMS = wordset(
    """soccer football basketball baseball hockey chess debate swim swimming track volleyball
    rugby cricket tennis netball lacrosse softball rowing cheer cheerleading dance running
    cycling quiz trivia bowling golf school varsity junior robotics drama"""
)
