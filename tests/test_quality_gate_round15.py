"""The gate's rules of 2026-11-29 (round 15), each from the round-14 ungated development sheets: turns readers
called ok that a rule flagged, and a reply that runs on into the next entry's description."""

from __future__ import annotations

from benchsmith.evals.quality_gate import TurnEvidence, judge_turn

WWW_AUTHENTICATE = (
    "Data Structures › HTTP Related",
    "property werkzeug.datastructures.WWWAuthenticate.realm\n\nA string to be displayed to users.\n\n"
    "werkzeug.datastructures.WWWAuthenticate.set_basic(realm='authentication required')\n\n"
    "Clear the auth info and enable basic auth.\n\n"
    "werkzeug.datastructures.WWWAuthenticate.set_digest(realm, nonce, qop=('auth',), opaque=None)\n\n"
    "Clear the auth info and enable digest auth.",
)


def test_a_reply_that_runs_on_into_the_next_entry_is_a_mismatch():
    question = "What is WWWAuthenticate.set_basic meant for?"
    both = "Clear the auth info and enable basic auth. Clear the auth info and enable digest auth."
    flags = judge_turn(TurnEvidence(question, both, gold=[WWW_AUTHENTICATE])).flags
    assert "set_digest" in flags["reply_mismatch"]
    own = "Clear the auth info and enable basic auth."
    assert "reply_mismatch" not in judge_turn(TurnEvidence(question, own, gold=[WWW_AUTHENTICATE])).flags


def test_two_sentences_of_one_entry_are_no_crossing():
    gold = (
        "Developer Interface",
        "requests.Session.get(url, **kwargs)\n\nSends a GET request. Returns Response object.\n\n"
        "requests.Session.head(url, **kwargs)\n\nSends a HEAD request. Returns Response object.",
    )
    turn = TurnEvidence(
        "What is the role of Session.head?", "Sends a HEAD request. Returns Response object.", gold=[gold]
    )
    assert "reply_mismatch" not in judge_turn(turn).flags


def test_a_dotted_name_is_no_word_said_twice():
    gold = [("celery.app.amqp", "class celery.app.amqp.AMQP\n\nApp AMQP API: app.amqp.")]
    dotted = TurnEvidence("Can you explain what amqp.AMQP is?", "App AMQP API: app.amqp.", gold=gold)
    assert "unaskable" not in judge_turn(dotted).flags
    twice = TurnEvidence("Can you explain what the the AMQP class is?", "App AMQP API: app.amqp.", gold=gold)
    assert "twice" in judge_turn(twice).flags["unaskable"]


def test_a_curly_apostrophe_is_no_one_letter_name():
    gold = [("Tasks", "A task queue’s input is a unit of work called a task.")]
    turn = TurnEvidence("What exactly is a task queue’s input?", "A task queue’s input is a unit of work.", gold=gold)
    assert "one-letter" not in judge_turn(turn).flags.get("unaskable", "")


def test_an_arguments_name_before_argument_leans_on_nothing():
    gold = [
        (
            "Data Structures",
            "class werkzeug.datastructures.Headers(defaults=None)\n\nAn object that stores some headers.",
        )
    ]
    question = "What does the defaults argument of werkzeug.datastructures.Headers control?"
    turn = TurnEvidence(question, "The defaults are the headers the object starts with.", gold=gold)
    assert "dangling_referent" not in judge_turn(turn).flags


def test_what_to_do_answered_with_no_move_is_a_mismatch():
    gold = [
        (
            "Development",
            "When you’re developing locally, you’re probably using the built-in server. You must enable it.",
        )
    ]
    question = "When I’m developing locally, what do I need to do?"
    nothing = TurnEvidence(
        question, "When you’re developing locally, you’re probably using the built-in server.", gold=gold
    )
    assert "nothing to do" in judge_turn(nothing).flags["reply_mismatch"]
    must = TurnEvidence(question, "When developing locally, you must enable the built-in server.", gold=gold)
    assert "reply_mismatch" not in judge_turn(must).flags


def test_what_happens_without_a_thing_is_answered_by_its_absence():
    gold = [("Quickstart › Timeouts", "Without a timeout, your code may hang for minutes or more.")]
    reply = "Without a timeout, your code may hang for minutes or more."
    without = TurnEvidence("What happens without a timeout?", reply, gold=gold)
    assert "reply_mismatch" not in judge_turn(without).flags
    opposite = TurnEvidence("What happens if I set a timeout?", reply, gold=gold)
    assert "opposite condition" in judge_turn(opposite).flags["reply_mismatch"]
