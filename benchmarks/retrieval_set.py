"""Our own retrieval set: long multi-session conversations between users and an assistant,
with questions whose evidence turns are known (`benchmarks/data/hub_conversations.json`).

Synthetic but built like what agents store: personal facts said once and asked about
months later, facts that change (a new job, a move), dates, facts that only answer a
question together (a sister's city, then a trip to "see her"), facts that answer only by
inference (an allergy, asked about a dish), and questions worded without the words of
the evidence. Plenty of chit-chat and look-alike facts about other people sit between
them. Everything is drawn from one seeded generator, so

    python -m benchmarks.retrieval_set

writes the same file on every machine. The layout is LoCoMo's (`conversation` with
`session_N` and `session_N_date_time`, `qa` with `evidence` dia ids), plus a `category`
name and a `split` per question: the conversations of the last 30% of the users are
"held-out" and are never used to tune the ranking.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

SEED = 20261201
USERS = 20
HELD_OUT_FROM = 14  # users 14..19: 30% of the conversations
SESSIONS = 14
PATH = Path(__file__).resolve().parent / "data" / "hub_conversations.json"
CATEGORIES = ("single-hop", "multi-hop", "temporal", "open-domain", "knowledge-update", "adversarial")

NAMES = [
    "Maya", "Daniel", "Priya", "Tomasz", "Aisha", "Lukas", "Sofia", "Kenji", "Grace", "Mateo",
    "Ingrid", "Omar", "Chloe", "Rafael", "Hana", "Jonas", "Amara", "Felix", "Leila", "Noah",
]
OTHERS = ["Ben", "Clara", "Dev", "Elena", "Farid", "Gwen", "Hugo", "Iris", "Jake", "Kira", "Liam", "Mira", "Nils", "Olga", "Pete", "Rosa"]
BREEDS = ["beagle", "border collie", "dachshund", "golden retriever", "greyhound", "corgi", "labrador", "whippet", "poodle", "husky"]
PET_NAMES = ["Pickles", "Biscuit", "Juniper", "Waffles", "Pepper", "Moose", "Clementine", "Bingo", "Noodle", "Ziggy", "Maple", "Otis"]
SHELTERS = ["Riverside", "Eastgate", "Hillcrest", "Northfield", "Lakeshore", "Oakwood"]
ROLES = [
    "nurse", "data analyst", "primary school teacher", "civil engineer", "graphic designer", "pharmacist",
    "software developer", "accountant", "physiotherapist", "journalist", "architect", "chef",
]
COMPANIES = [
    "Brightwave", "Northstar Logistics", "Halden Bank", "Greenleaf Foods", "Copperline", "Mosaic Health",
    "Quarry Labs", "Bluefin Media", "Tidewater Energy", "Lumen Studio", "Ashford Group", "Redkite Software",
]
CITIES = [
    "Lisbon", "Denver", "Glasgow", "Toronto", "Melbourne", "Portland", "Valencia", "Austin", "Leeds", "Utrecht",
    "Seattle", "Porto", "Wellington", "Bristol", "Montreal", "Hamburg", "Kyoto", "Dublin",
]
SUBJECTS = ["chemistry", "history", "music", "mathematics", "French", "biology", "art", "geography"]
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"]
# (what is said, a dish asked about that contains it without naming it)
ALLERGENS = [
    ("peanuts", "chicken satay"), ("shellfish", "shrimp scampi"), ("dairy", "a cheese fondue"),
    ("gluten", "a plate of spaghetti"), ("eggs", "a mushroom omelette"), ("sesame", "a bowl of hummus"),
]
# (instrument, a question it answers yes to, one it answers no to)
INSTRUMENTS = [
    ("cello", "a string instrument"), ("violin", "a string instrument"), ("flute", "a woodwind instrument"),
    ("saxophone", "a woodwind instrument"), ("trumpet", "a brass instrument"), ("piano", "a keyboard instrument"),
]
RACES = ["Harbour 10K", "Riverside Half Marathon", "Autumn Trail Run", "City Bridges 5K", "Hillside Relay", "Lakefront Marathon"]
BOOKS = [
    "The Salt Path", "Piranesi", "Klara and the Sun", "The Overstory", "Project Hail Mary", "Circe",
    "A Gentleman in Moscow", "The Remains of the Day", "Station Eleven", "Educated",
]
CARS = ["Honda Civic", "Ford Fiesta", "Toyota Prius", "Volkswagen Golf", "Kia Niro", "Subaru Outback", "Mazda 3", "Nissan Leaf"]
SPORTS = [("swimming", "the pool"), ("cycling", "the bike"), ("rowing", "the rowing club"), ("yoga", "the studio"), ("climbing", "the bouldering gym")]
RELATIVES = ["cousin", "brother", "best friend", "aunt", "niece"]
DISHES = ["lasagne", "fish tacos", "a Thai green curry", "shakshuka", "a mushroom risotto", "banana bread", "ramen", "a lentil soup"]
SHOWS = ["a crime drama", "a baking competition", "a nature documentary", "a sitcom from the nineties", "a space opera", "a cooking show"]
WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]

# Chit-chat that fills the sessions: (user, assistant); {x} fields filled from the pools.
FILLERS = [
    ("Can you suggest something quick for {weekday} dinner? I was thinking {dish}.", "{dish_cap} works well on a weeknight; prep the vegetables first and it takes about thirty minutes."),
    ("I've been binge-watching {show} and I'm way too invested.", "That sounds fun! Is it the characters or the plot that keeps you hooked?"),
    ("Work has been hectic this week, so many meetings.", "That sounds draining. Have you been able to block some focus time on your calendar?"),
    ("The weather was lovely today, I finally sat outside with a coffee.", "A bit of sun makes such a difference. Did you get some time to yourself?"),
    ("Could you remind me how to convert grams of flour to cups?", "Roughly 125 grams of all-purpose flour make one cup, though it depends on how you scoop it."),
    ("I can't sleep lately, my mind keeps racing at night.", "That's rough. A fixed wind-down routine and no screens for the last hour often help."),
    ("{other} and I went for brunch on {weekday}, the pancakes were enormous.", "Sounds like a great morning. Was it a new place?"),
    ("I need a gift idea for a colleague who is leaving, any thoughts?", "A nice notebook, a plant, or a card everyone signs is usually appreciated."),
    ("My laptop keeps freezing when I open too many tabs.", "It might be short on memory; closing background apps or adding RAM usually helps."),
    ("I'm trying to drink more water, but I always forget.", "A bottle on your desk and a reminder every couple of hours can build the habit."),
    ("We cleaned out the garage this weekend, found so much old stuff.", "That's satisfying! Anything worth keeping, or did most of it go?"),
    ("Is it normal to feel tired after a long flight even a few days later?", "Yes, jet lag can last a few days; daylight in the morning helps your body clock reset."),
    ("I tried to bake bread for the first time and it came out like a brick.", "First loaves often do! The dough may have needed more time to rise somewhere warm."),
    ("{other} keeps sending me memes at 2am.", "Ha, a night owl friend! Do you reply or save them for the morning?"),
    ("Thinking about repainting the living room, maybe a soft green.", "Sage green is calming and goes well with wood furniture."),
    ("I finally sorted out my taxes, what a relief.", "Well done, that's a weight off. Did you get anything back?"),
    ("My phone screen cracked again, I need a better case.", "A case with raised edges and a glass protector would save you the next repair."),
    ("We had a power cut last night, so we played cards by candlelight.", "That sounds cosy in its own way. Who won?"),
    ("I'm thinking about learning a bit of Spanish before summer.", "Twenty minutes a day with an app and some podcasts can get you surprisingly far."),
    ("The neighbours are renovating and the drilling starts at 7am.", "That's an early start. Noise-cancelling headphones might save your mornings."),
    ("Do you have tips for keeping basil alive on a windowsill?", "Plenty of light, water when the top of the soil is dry, and pinch off the flowers."),
    ("Just got back from the supermarket, prices keep going up.", "It really adds up. Planning meals for the week can help cut waste."),
    ("I went to a pottery class with {other}, my bowl is very lopsided.", "Lopsided bowls have character! Will you go back for another class?"),
    ("What's a good stretch for a stiff neck after sitting all day?", "Slow neck tilts and shoulder rolls every hour help; so does raising your screen to eye level."),
]
# Look-alike facts about other people, so that a question's words also match wrong turns.
DISTRACTORS = [
    ("My coworker {other} just adopted a {breed} called {pet}.", "How lovely for {other}! Puppies are a lot of work though."),
    ("{other} is thinking of moving to {city} next year.", "{city} is a great place. What draws {other} there?"),
    ("{other} got a job offer from {company} as a {role}.", "That's exciting for {other}! Is it a big change?"),
    ("{other} ran the {race} and hated every minute of it.", "Ha, not every race is a good one. Will {other} try again?"),
    ("{other} lent me {book} but I haven't opened it yet.", "It's been popular lately; maybe save it for a rainy weekend."),
    ("{other} bought a {car} and won't stop talking about it.", "New-car excitement! Is it electric?"),
    ("My friend {other} is allergic to {allergen} too, funny coincidence.", "It's more common than people think. Do you share recipes?"),
    ("{other} plays the {instrument} in a local band.", "That's impressive. Have you seen them play live?"),
]


@dataclass
class Turn:
    speaker: str
    text: str
    dia_id: str = ""


@dataclass
class Session:
    date: datetime
    blocks: list[list[Turn]] = field(default_factory=list)


@dataclass
class Question:
    question: str
    answer: str
    evidence: list[Turn]
    category: str


class Conversation:
    def __init__(self, rng: random.Random, user: str, start: datetime) -> None:
        self.rng = rng
        self.user = user
        date = start
        self.sessions: list[Session] = []
        for _ in range(SESSIONS):
            self.sessions.append(Session(date=date))
            date += timedelta(days=rng.randint(4, 24), hours=rng.randint(-3, 3), minutes=rng.randint(0, 59))
        self.questions: list[Question] = []

    def say(self, session: int, user_text: str, assistant_text: str) -> Turn:
        """A user turn and the assistant's answer in `session`; returns the user's turn."""
        turn = Turn(self.user, user_text)
        self.sessions[session].blocks.append([turn, Turn("Assistant", assistant_text)])
        return turn

    def ask(self, category: str, question: str, answer: str, *evidence: Turn) -> None:
        self.questions.append(Question(question, answer, list(evidence), category))

    def when(self, session: int) -> str:
        return f"{self.sessions[session].date.day} {self.sessions[session].date:%B %Y}"

    def to_json(self, sample_id: str, split: str) -> dict[str, Any]:
        conversation: dict[str, Any] = {"speaker_a": self.user, "speaker_b": "Assistant"}
        for n, session in enumerate(self.sessions, start=1):
            self.rng.shuffle(session.blocks)
            turns = [turn for block in session.blocks for turn in block]
            for i, turn in enumerate(turns, start=1):
                turn.dia_id = f"D{n}:{i}"
            d = session.date
            conversation[f"session_{n}_date_time"] = f"{d:%-I:%M} {d:%p}".lower() + f" on {d.day} {d:%B}, {d.year}"
            conversation[f"session_{n}"] = [{"speaker": t.speaker, "dia_id": t.dia_id, "text": t.text} for t in turns]
        qa = [
            {"question": q.question, "answer": q.answer, "evidence": [t.dia_id for t in q.evidence], "category": q.category, "split": split}
            for q in self.questions
        ]
        return {"sample_id": sample_id, "conversation": conversation, "qa": qa}


def build_conversation(rng: random.Random, index: int) -> Conversation:
    user = NAMES[index]
    start = datetime(2024, 1, 3) + timedelta(days=rng.randint(0, 200), hours=rng.randint(8, 20), minutes=rng.randint(0, 59))
    c = Conversation(rng, user, start)
    pick = rng.choice
    others = rng.sample(OTHERS, 6)

    def at(low: int, high: int) -> int:
        return rng.randint(low, min(high, SESSIONS - 1))

    # A dog, adopted on a known date.
    breed, pet, shelter = pick(BREEDS), pick(PET_NAMES), pick(SHELTERS)
    a = at(0, 4)
    dog = c.say(a, f"We finally adopted a {breed} from the {shelter} shelter yesterday, we're calling him {pet}!",
                f"Congratulations! How is {pet} settling in at home?")
    pet_walk = c.say(at(a + 1, 9), f"{pet} pulled so hard on the lead this morning that I nearly fell into a hedge.",
                     "Oh no! A front-clip harness can really help with pulling.")
    c.ask("single-hop", f"What is the name of {user}'s dog?", pet, dog)
    c.ask("single-hop", f"What breed is {user}'s dog?", breed, dog)
    c.ask("temporal", f"When did {user} adopt {pet}?", f"The day before {c.when(a)}", dog)
    c.ask("adversarial", f"What did {user} decide to call the pup that came home from the rescue centre?", pet, dog)
    c.ask("multi-hop", f"What breed is the animal that nearly pulled {user} into a hedge?", breed, dog, pet_walk)

    # A job, then a new one.
    role1, role2 = rng.sample(ROLES, 2)
    company1, company2 = rng.sample(COMPANIES, 2)
    a, b = at(0, 3), at(7, 12)
    job1 = c.say(a, f"I've been working as a {role1} at {company1} for about three years now.",
                 f"Three years is a good stretch. Do you still enjoy being a {role1}?")
    job2 = c.say(b, f"Big news: I handed in my notice at {company1}. I start as a {role2} at {company2} next month.",
                 "That's a big step, congratulations! What made you decide to switch?")
    c.ask("knowledge-update", f"Where does {user} work now?", f"{company2}, as a {role2}", job2)
    c.ask("single-hop", f"What was {user}'s job at {company1}?", role1, job1)
    c.ask("temporal", f"When did {user} announce leaving {company1}?", c.when(b), job2)
    c.ask("adversarial", f"Which employer is {user} joining after quitting the old one?", company2, job2)

    # A home city, then a move.
    city1, city2, city3 = rng.sample(CITIES, 3)
    a, b = at(0, 3), at(6, 13)
    home1 = c.say(a, f"We've lived in {city1} since the kids were little, I can't imagine leaving.",
                  f"{city1} sounds like it really feels like home for your family.")
    home2 = c.say(b, f"The movers come on Friday, we're relocating to {city2} for my partner's new position.",
                  f"A move to {city2} is a big change! Do you have schools sorted out?")
    c.ask("knowledge-update", f"Which city does {user} live in at the moment?", city2, home2)
    c.ask("single-hop", f"Where did {user}'s family live before the move?", city1, home1)
    c.ask("adversarial", f"Why did {user}'s household pack up and leave their old town?", "For the partner's new position", home2)

    # A sister in a city, then a trip to see her: only the two together answer.
    sister, subject, month = pick(OTHERS[:8]), pick(SUBJECTS), pick(MONTHS)
    a, b = at(1, 5), at(7, 13)
    sis1 = c.say(a, f"My sister {sister} lives in {city3}; she teaches {subject} at a secondary school there.",
                 f"Teaching {subject} is a demanding job. Do you see her often?")
    sis2 = c.say(b, f"I'm booking flights to go see {sister} in {month}, I haven't seen her in ages.",
                 f"That will be a lovely reunion! {month} is a nice time to travel.")
    c.ask("multi-hop", f"Which city is {user} flying to in {month}?", city3, sis1, sis2)
    c.ask("multi-hop", f"What subject does the person {user} is visiting in {month} teach?", subject, sis1, sis2)
    c.ask("single-hop", f"Where does {user}'s sister live?", city3, sis1)

    # Facts that answer only by inference.
    allergen, dish = pick(ALLERGENS)
    instrument, family = pick(INSTRUMENTS)
    a = at(0, 13)
    allergy = c.say(a, f"Ever since I was a kid I can't go near {allergen}, my throat swells up within minutes.",
                    "That sounds scary. Do you carry an adrenaline pen just in case?")
    music = c.say(at(0, 13), f"I practise the {instrument} every evening after dinner, it calms me down.",
                  f"What a nice routine. How long have you been playing the {instrument}?")
    veg = c.say(at(0, 13), "I stopped eating meat last spring and honestly I don't miss it.",
                "Good for you! Have you found some favourite protein sources?")
    trains = c.say(at(0, 13), "Planes give me panic attacks, so we take the train everywhere, even for long trips.",
                   "Trains can be relaxing, and you get to see the countryside.")
    c.ask("open-domain", f"Would {dish} be a safe thing to serve {user}?", f"No, {user} is allergic to {allergen}", allergy)
    c.ask("open-domain", f"Does {user} play {family}?", f"Yes, the {instrument}", music)
    c.ask("open-domain", f"Would {user} be likely to order a steak at a restaurant?", "No, they stopped eating meat", veg)
    c.ask("open-domain", f"How would {user} most likely travel to a city abroad?", "By train, planes give them panic attacks", trains)

    # A race on a date.
    race, minutes = pick(RACES), rng.randint(22, 140)
    a = at(2, 11)
    ran = c.say(a, f"I ran the {race} on Sunday and finished in {minutes // 60}h{minutes % 60:02d}, my legs are jelly.",
                "Congratulations on finishing! Make sure you rest and stretch.")
    c.ask("temporal", f"When did {user} run the {race}?", f"The Sunday before {c.when(a)}", ran)
    c.ask("single-hop", f"How long did it take {user} to finish the {race}?", f"{minutes // 60}h{minutes % 60:02d}", ran)

    # A wedding on a date, said in words.
    relative, wedding_day = pick(RELATIVES), c.sessions[min(a + 1, SESSIONS - 1)].date + timedelta(days=rng.randint(20, 60))
    w = c.say(at(0, 10), f"My {relative}'s wedding is on {wedding_day.day} {wedding_day:%B}, I still need to buy a suit.",
              "Exciting! Are you going for something classic or a bit bolder?")
    c.ask("temporal", f"When is {user}'s {relative} getting married?", f"{wedding_day.day} {wedding_day:%B}", w)

    # A recommended book, finished later.
    friend, book = others[0], pick(BOOKS)
    a, b = at(0, 6), at(7, 13)
    rec = c.say(a, f"My friend {friend} keeps telling me I have to read {book}.", "Friends' recommendations are often the best ones.")
    done = c.say(b, f"Finished {book} last night, the ending was brutal.", "Endings like that stay with you. Would you recommend it?")
    c.ask("multi-hop", f"Who recommended the book {user} finished recently?", friend, rec, done)
    c.ask("single-hop", f"Which book did {user} finish reading?", book, done)

    # A car, then another.
    car1, car2 = rng.sample(CARS, 2)
    a, b = at(0, 5), at(7, 13)
    old = c.say(a, f"My old {car1} failed its inspection again, it's costing me a fortune.", "Repairs add up. Is it worth fixing?")
    new = c.say(b, f"We traded in the {car1} and now drive a {car2}.", f"Nice upgrade! How does the {car2} feel on the motorway?")
    c.ask("knowledge-update", f"What car does {user} drive now?", car2, new)
    c.ask("adversarial", f"Which vehicle keeps failing roadworthiness checks for {user}?", car1, old)

    # A sport, then another after an injury.
    (sport, place), = rng.sample(SPORTS, 1)
    a, b = at(0, 5), at(7, 13)
    training = c.say(a, "I signed up for a half marathon in the autumn, so I'm running four times a week.", "That's a solid plan. Are you following a training schedule?")
    switched = c.say(b, f"My knee gave out, the physio says no running for months, so it's {sport} at {place} for me now.",
                     f"Sorry about the knee. {sport.capitalize()} is gentle on the joints, good choice.")
    c.ask("knowledge-update", f"What sport is {user} focusing on these days?", sport, switched)
    c.ask("multi-hop", f"Why did {user} give up training for the autumn race?", "A knee injury", training, switched)
    c.ask("adversarial", f"What did the physiotherapist forbid {user} to do?", "Running", switched)

    # Chit-chat and look-alikes, so that every session is long and words repeat.
    values_pool = {
        "weekday": WEEKDAYS, "dish": DISHES, "show": SHOWS, "other": others[1:], "breed": BREEDS, "pet": PET_NAMES,
        "city": CITIES, "company": COMPANIES, "role": ROLES, "race": RACES, "book": BOOKS, "car": CARS,
        "allergen": [x for x, _ in ALLERGENS], "instrument": [x for x, _ in INSTRUMENTS],
    }
    for n in range(SESSIONS):
        for user_t, assistant_t in rng.sample(FILLERS, 5) + rng.sample(DISTRACTORS, 1):
            values = {k: rng.choice(v) for k, v in values_pool.items()}
            values["dish_cap"] = values["dish"][0].upper() + values["dish"][1:]
            c.say(n, user_t.format(**values), assistant_t.format(**values))
    return c


def build() -> list[dict[str, Any]]:
    rng = random.Random(SEED)
    samples = []
    for index in range(USERS):
        conversation = build_conversation(rng, index)
        split = "held-out" if index >= HELD_OUT_FROM else "tuning"
        samples.append(conversation.to_json(f"hub-{index + 1:02d}", split))
    return samples


def main() -> None:
    samples = build()
    PATH.write_text(json.dumps(samples, indent=1, ensure_ascii=False) + "\n")
    questions = [q for s in samples for q in s["qa"]]
    turns = sum(len(v) for s in samples for k, v in s["conversation"].items() if k.startswith("session_") and not k.endswith("date_time"))
    print(f"{PATH}: {len(samples)} conversations, {turns} turns, {len(questions)} questions")


if __name__ == "__main__":
    main()
