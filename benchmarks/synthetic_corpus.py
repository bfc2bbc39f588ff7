"""A synthetic BEIR corpus of any size, written line by line (never held in memory).

Real corpora mix topical prose, near-duplicates (mirrors, versions, quoted copies) and
boilerplate (navigation bars, licence footers); this one has all three, seeded:

* topical documents: one topic each, its words drawn from the topic's own vocabulary (pseudo-words,
  so no two topics share content words) and a pool of common English words;
* near-duplicates (``NEAR_DUPLICATE_SHARE``): a recent document copied with a few words changed;
* boilerplate (``BOILERPLATE_SHARE``): a document that is only navigation and licence lines.

Each document is one chunk at the default chunk size (600 to 900 characters), so N documents
are N chunks before deduplication and filtering.
"""

from __future__ import annotations

import json
import random
from collections import deque
from pathlib import Path

NEAR_DUPLICATE_SHARE = 0.08
BOILERPLATE_SHARE = 0.04
TOPIC_VOCABULARY = 120  # pseudo-words per topic
DOCUMENTS_PER_TOPIC = 500
RECENT = 2_000  # documents a near-duplicate may copy: a bounded window keeps memory flat

COMMON_WORDS = (
    "the of and to in is that it for as with was on be by this are from at or an which "
    "have not but can has its more when also than other these into each may most such "
    "between after before about over under through where while because however often "
    "system method result value process model level change field study data part case"
).split()
SYLLABLES = (
    "ka lo mi ne ru sa te vo zu bi da fe go hu ja ke li mo nu pa qui ro si tu va we xi yo "
    "zan bel cor dim est fal gor hin jul kor lum mar nor pil qua ris sol tam ulm ver"
).split()
NAVIGATION = (
    "Home | About us | Products | Documentation | Blog | Careers | Contact | Sign in",
    "Skip to main content. Menu. Search this site. Toggle navigation.",
    "Previous page | Next page | Back to top | Print this page | Share on social media",
)
LICENCE = (
    "Copyright (c) 2009-2024 The Example Foundation. All rights reserved.",
    "Licensed under the Apache License, Version 2.0; you may not use this file except in compliance.",
    "This page was last edited on 3 March 2023. Content is available under CC BY-SA 4.0.",
    "Privacy policy | Terms of use | Cookie settings | Accessibility statement",
)


def topic_vocabulary(topic: int) -> list[str]:
    """The topic's own pseudo-words, the same for a topic whatever the corpus size."""
    rng = random.Random(f"topic-{topic}")
    return [
        f"{''.join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4)))}{topic % 97}"
        for _ in range(TOPIC_VOCABULARY)
    ]


def topical_text(rng: random.Random, vocabulary: list[str]) -> str:
    sentences, length = [], 0
    target = rng.randint(600, 900)
    while length < target:
        words = [
            rng.choice(vocabulary) if rng.random() < 0.55 else rng.choice(COMMON_WORDS)
            for _ in range(rng.randint(8, 16))
        ]
        sentence = " ".join(words).capitalize() + "."
        sentences.append(sentence)
        length += len(sentence) + 1
    return " ".join(sentences)[:900].rsplit(" ", 1)[0] + "."


def near_duplicate(rng: random.Random, text: str, vocabulary: list[str]) -> str:
    words = text.split()
    for _ in range(rng.randint(1, 4)):
        words[rng.randrange(len(words))] = rng.choice(vocabulary)
    return " ".join(words)


def boilerplate_text(rng: random.Random) -> str:
    lines = [rng.choice(NAVIGATION) for _ in range(rng.randint(3, 6))] + rng.sample(LICENCE, k=3)
    return "\n".join(lines)


def write_corpus(path: Path, documents: int, seed: int = 0) -> dict[str, int]:
    """Write ``documents`` BEIR records to ``path`` (corpus.jsonl); counts of each kind."""
    rng = random.Random(seed)
    topics = max(10, documents // DOCUMENTS_PER_TOPIC)
    vocabularies: dict[int, list[str]] = {}
    recent: deque[tuple[int, str]] = deque(maxlen=RECENT)
    counts = {"documents": documents, "topics": topics, "topical": 0, "near_duplicates": 0, "boilerplate": 0}
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as out:
        for number in range(documents):
            draw = rng.random()
            if draw < BOILERPLATE_SHARE:
                topic, text, kind = -1, boilerplate_text(rng), "boilerplate"
            elif draw < BOILERPLATE_SHARE + NEAR_DUPLICATE_SHARE and recent:
                topic, source = rng.choice(recent)
                text, kind = near_duplicate(rng, source, vocabularies[topic]), "near_duplicates"
            else:
                topic = rng.randrange(topics)
                if topic not in vocabularies:
                    vocabularies[topic] = topic_vocabulary(topic)
                text, kind = topical_text(rng, vocabularies[topic]), "topical"
                recent.append((topic, text))
            counts[kind] += 1
            title = "Site navigation" if topic < 0 else f"Topic {topic} note {number}"
            out.write(json.dumps({"_id": f"d{number}", "title": title, "text": text}) + "\n")
    return counts
