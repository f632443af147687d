"""Seeded development sets in the published file formats, for measuring retrieval without the real files
(which users bring): LoCoMo-style conversations (two named people, many sessions over months, short turns,
most of them small talk; questions that name a person, with the dia_ids of their evidence) and
LongMemEval-style haystacks with knowledge updates (a fact said in one session and changed in a later one).

They are for development, not for the figures the issue asks about: tune on seed 0, report on other seeds,
and say so. Every choice comes from random.Random(f"{kind}:{seed}:…"), so a seed gives the same file on any
machine."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

NAMES = [
    "Caroline",
    "Melanie",
    "Jon",
    "Gina",
    "John",
    "Maria",
    "Joanna",
    "Nate",
    "Tim",
    "Audrey",
    "Andrew",
    "Evan",
    "Sam",
    "Calvin",
    "Dave",
    "Deborah",
    "Jolene",
    "James",
    "Priya",
    "Omar",
]
# (what happened, how a question asks about it): the question paraphrases the turn, as real questions do.
EVENTS = [
    ("went to an LGBTQ support group meeting", "attend a support group"),
    ("signed up for a pottery class at the community center", "take a ceramics course"),
    ("ran a charity race for mental health awareness", "run for charity"),
    ("adopted a puppy from the shelter", "get a new dog"),
    ("started volunteering at the animal rescue", "begin volunteering"),
    ("painted a sunrise over the lake", "paint a picture"),
    ("went camping in the mountains with the kids", "go on a camping trip"),
    ("got a promotion at the marketing firm", "get promoted"),
    ("visited my grandmother in Sweden", "travel to see family abroad"),
    ("joined a rock climbing gym downtown", "take up climbing"),
    ("finished reading a novel about time travel", "finish a book"),
    ("applied to a counseling master's program", "apply to graduate school"),
    ("played guitar at an open mic night", "perform music in public"),
    ("baked a lemon cake for my neighbor's birthday", "bake for someone"),
    ("bought a used car, a blue Honda", "buy a vehicle"),
    ("lost my wallet at the farmers market", "lose something"),
    ("started learning Spanish with an app", "study a language"),
    ("hosted a game night for my coworkers", "host a party"),
    ("took my dog to the beach for the first time", "take the dog to the sea"),
    ("went to a Taylor Swift concert", "see a concert"),
    ("planted tomatoes and basil in the backyard", "start a garden"),
    ("had a job interview at a tech startup", "interview for a job"),
    ("signed the lease on a new apartment", "move to a new place"),
    ("watched the meteor shower from the rooftop", "watch the night sky"),
]
WHO_WITH = ["my sister", "my best friend", "my partner", "my mom", "some coworkers", "my kids", "a neighbor"]
FEELINGS = [
    "It was honestly amazing.",
    "I was nervous but it went well.",
    "It meant a lot to me.",
    "Still thinking about it.",
    "I want to do it again soon.",
    "",
]
SMALL_TALK = [
    "Hey! Long time no see, how have you been?",
    "That's so great to hear!",
    "Wow, I'm really happy for you.",
    "Haha, that sounds like a lot of fun.",
    "Thanks! It's been a busy couple of weeks.",
    "How are the kids doing?",
    "I totally get that, life gets hectic.",
    "That's awesome, you deserve it.",
    "Oh no, I'm sorry to hear that.",
    "What have you been up to lately?",
    "Same here, just trying to keep up with everything.",
    "You always inspire me, you know that?",
    "Let's catch up again soon!",
    "Take care, talk to you later!",
    "I've been thinking about what you said last time.",
    "That's really thoughtful of you.",
]
REACTIONS = [
    "Wow, {short}? How did that go?",
    "No way, you {short_past}? Tell me more!",
    "I've always wanted to {short} myself.",
    "That reminds me, I should {short} sometime too.",
]
WHEN_ASK = ["When did {name} {ask}?", "Around what date did {name} {ask}?"]
WHAT_ASK = ["What did {name} do with {who}?", "Who did {name} {ask} with?"]
MULTI_ASK = ["What are some things {name} did with {who}?", "Which activities did {name} share with {who}?"]
START = datetime(2023, 1, 8, 13, 0, tzinfo=UTC)


def _locomo_date(at: datetime) -> str:
    return at.strftime("%-I:%M %p on %-d %B, %Y").replace("AM on", "am on").replace("PM on", "pm on")


def _theirs(who: str) -> str:
    return who.replace("my ", "their ", 1)


def locomo_sample(seed: int, index: int, *, sessions: int = 20, turns: int = 24, events: int = 30) -> dict:
    rng = random.Random(f"locomo:{seed}:{index}")
    a, b = rng.sample(NAMES, 2)
    convo: dict = {"speaker_a": a, "speaker_b": b}
    at = START + timedelta(days=rng.randint(0, 200))
    # Each fact: one person, one event, one companion; some events happen to both people (so the name matters).
    facts = []
    for _ in range(events):
        facts.append((rng.choice([a, b]), rng.choice(EVENTS), rng.choice(WHO_WITH)))
    plan: dict[int, list] = {}
    for fact in facts:
        plan.setdefault(rng.randrange(sessions), []).append(fact)
    qa: list[dict] = []
    said: dict[tuple[str, str], list[str]] = {}
    for s in range(1, sessions + 1):
        key = f"session_{s}"
        convo[f"{key}_date_time"] = _locomo_date(at)
        rows: list[dict] = []
        speaker = rng.choice([a, b])
        todo = list(plan.get(s - 1, []))
        # Fact turns at least three apart: each is followed by the other person's reaction.
        free = range(1, turns - 1, 3)
        slots = sorted(rng.sample(free, min(len(todo), len(free))))
        for t in range(turns):
            other = b if speaker == a else a
            if slots and t == slots[0] and todo:
                slots.pop(0)
                name, (event, ask), who = todo.pop(0)
                speaker = name
                text = f"Last weekend I {event} with {who}. {rng.choice(FEELINGS)}".strip()
                dia = f"D{s}:{t + 1}"
                rows.append({"speaker": speaker, "dia_id": dia, "text": text})
                said.setdefault((name, who), []).append(dia)
                qa.append(
                    {
                        "question": rng.choice(WHEN_ASK).format(name=name, ask=ask),
                        "answer": f"the weekend before {convo[f'{key}_date_time']}",
                        "evidence": [dia],
                        "category": 2,
                    }
                )
                qa.append(
                    {
                        "question": rng.choice(WHAT_ASK).format(name=name, ask=ask, who=_theirs(who)),
                        "answer": event,
                        "evidence": [dia],
                        "category": 4,
                    }
                )
                speaker = b if name == a else a
                short = ask
                rows.append(
                    {
                        "speaker": speaker,
                        "dia_id": f"D{s}:{t + 2}",
                        "text": rng.choice(REACTIONS).format(short=short, short_past=event.split(" ", 1)[0]),
                    }
                )
                continue
            if rows and rows[-1]["dia_id"] == f"D{s}:{t + 1}":
                continue
            rows.append({"speaker": speaker, "dia_id": f"D{s}:{t + 1}", "text": rng.choice(SMALL_TALK)})
            speaker = other
        convo[key] = rows
        at += timedelta(days=rng.randint(5, 21), hours=rng.randint(-3, 3))
    for (name, who), dias in said.items():
        if len(dias) >= 2:
            qa.append(
                {
                    "question": rng.choice(MULTI_ASK).format(name=name, who=_theirs(who)),
                    "answer": "several things",
                    "evidence": dias,
                    "category": 1,
                }
            )
    return {"sample_id": f"conv-{seed}-{index}", "conversation": convo, "qa": qa}


def locomo(seed: int = 0, samples: int = 3, **kw) -> list[dict]:
    """A LoCoMo-format file's content: `samples` conversations (~sessions × turns turns each)."""
    return [locomo_sample(seed, i, **kw) for i in range(samples)]


# --- LongMemEval-style knowledge updates --------------------------------------------------------------

UPDATES = [
    ("my personal best in the 5K", "{v} minutes", ["27", "26", "25", "24"]),
    ("the number of plants on my balcony", "{v} plants", ["5", "8", "12", "15"]),
    ("my monthly rent", "{v} dollars", ["1400", "1550", "1700", "1850"]),
    ("the car I drive", "a {v}", ["Honda Civic", "Toyota Corolla", "Ford Focus", "Mazda 3"]),
    ("my favourite coffee shop", "{v}", ["Blue Bottle", "Stumptown", "Philz", "Intelligentsia"]),
    ("the team I manage at work", "{v} people", ["4", "6", "9", "11"]),
    ("my daily step goal", "{v} steps", ["6000", "8000", "10000", "12000"]),
]
FILLER_USER = [
    "Can you suggest a recipe for dinner tonight?",
    "What are good stretches after running?",
    "Help me write an email to my landlord.",
    "What's a good book on habits?",
    "How do I repot a succulent?",
    "Any tips for sleeping better?",
    "Explain compound interest simply.",
]
FILLER_ASSISTANT = [
    "Sure! Here is a simple idea you could try.",
    "Great question, here are a few tips.",
    "Happy to help with that. Here's a draft.",
    "Here are some options to consider.",
]


def _lme_date(at: datetime) -> str:
    return at.strftime("%Y/%m/%d (%a) %H:%M")


def longmemeval(seed: int = 0, questions: int = 20, sessions: int = 30) -> list[dict]:
    """A LongMemEval-format file's content: knowledge-update questions, each over its own haystack in which
    the fact is said in one session and changed in a later one."""
    out = []
    for qi in range(questions):
        rng = random.Random(f"longmemeval:{seed}:{qi}")
        subject, form, values = rng.choice(UPDATES)
        old, new = rng.sample(values, 2)
        first, second = sorted(rng.sample(range(sessions), 2))
        at = START + timedelta(days=rng.randint(0, 100))
        ids, dates, haystack = [], [], []
        for s in range(sessions):
            sid = f"sess_{seed}_{qi}_{s}"
            turns = []
            for _ in range(rng.randint(2, 4)):
                turns.append({"role": "user", "content": rng.choice(FILLER_USER)})
                turns.append({"role": "assistant", "content": rng.choice(FILLER_ASSISTANT)})
            if s == first:
                turns.insert(
                    0,
                    {
                        "role": "user",
                        "content": f"By the way, {subject} is {form.format(v=old)}.",
                        "has_answer": True,
                    },
                )
            if s == second:
                turns.insert(
                    0,
                    {
                        "role": "user",
                        "has_answer": True,
                        "content": f"Quick update: {subject} is now {form.format(v=new)}.",
                    },
                )
            ids.append(sid)
            dates.append(_lme_date(at))
            haystack.append(turns)
            at += timedelta(days=rng.randint(1, 6), hours=rng.randint(0, 5))
        out.append(
            {
                "question_id": f"ku_{seed}_{qi}",
                "question_type": "knowledge-update",
                "question": f"What is {subject.replace('my ', 'my current ', 1)}?",
                "answer": form.format(v=new),
                "question_date": _lme_date(at),
                "haystack_dates": dates,
                "haystack_session_ids": ids,
                "haystack_sessions": haystack,
                "answer_session_ids": [ids[first], ids[second]],
            }
        )
    return out
