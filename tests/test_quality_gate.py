"""The offline quality gate (evals/quality_gate/): each of the reading rubric's broken classes is
caught on a turn a reader called broken, and a sound turn passes."""

from __future__ import annotations

import collections

import pytest

from benchsmith.agents.offline.wording import FRAMES
from benchsmith.evals.measures.answer_containment import answer_sentence, contains_answer
from benchsmith.evals.quality_gate import GATE_CLASSES, TurnEvidence, judge_question, judge_turn
from benchsmith.evals.quality_gate.question_rules import topic_not_noun_phrase

SESSION = (
    "Developer Interface › Request Sessions",
    "requests.Session.mount(prefix, adapter)\n\nRegisters a connection adapter to a prefix.\n\n"
    "requests.Session.close()\n\nCloses all adapters and as such the session.",
)


def test_a_sound_turn_passes():
    turn = TurnEvidence("What does Session.mount do?", "Registers a connection adapter to a prefix.", gold=[SESSION])
    assert judge_turn(turn).flags == {}


def test_a_question_whose_topic_is_a_verb_phrase_is_caught():
    turn = TurnEvidence(
        "What is the role of the come back?", "Come back later for more.", gold=[("Guide", "Come back later for more.")]
    )
    assert "topic_not_noun_phrase" in judge_turn(turn).flags
    assert "topic_not_noun_phrase" in judge_question(turn).flags  # before any reply is written


@pytest.mark.parametrize(
    "question", ["What will I find in Don't treat?", "Can you explain what familiarize yourself is?"]
)
def test_clause_fragments_in_a_things_place_are_caught(question):
    assert "topic_not_noun_phrase" in judge_turn(TurnEvidence(question, "x y z", gold=[("G", "x y z")])).flags


def test_a_fake_ambiguity_is_caught_and_a_real_one_passes():
    lzma = ("lzma › decompress", "lzma.decompress(data)\n\nDecompress a block of LZMA data.")
    bz2 = ("bz2 › decompress", "bz2.decompress(data)\n\nDecompress a block of bz2 data.")
    reply = "That could mean more than one thing. Do you mean lzma.decompress or bz2.decompress?"
    real = TurnEvidence("What does decompress() do?", reply, "underspecified", candidates=[lzma, bz2])
    assert "fake_ambiguity" not in judge_turn(real).flags
    # one concept on an API page and on a narrative page: no two entries of the name
    narrative = ("Compression guide", "Use decompress to restore compressed data in memory.")
    fake = TurnEvidence("What does decompress() do?", reply, "underspecified", candidates=[lzma, narrative])
    assert "fake_ambiguity" in judge_turn(fake).flags
    # the same entry twice, once under its page's name
    same = ("asyncio.transports › WriteTransport.write", "Write some data bytes to the transport.")
    other = ("asyncio.transports › WriteTransport", "asyncio.transports.WriteTransport.write(data)\n\nWrite data.")
    assert (
        "fake_ambiguity"
        in judge_turn(TurnEvidence("What does write() do?", reply, "underspecified", candidates=[same, other])).flags
    )
    # the previous turn already says which one is meant
    said = TurnEvidence(
        "What does decompress() do?",
        reply,
        "underspecified",
        previous=[("How do I open an lzma file?", "Use lzma.open.")],
        candidates=[lzma, bz2],
    )
    assert "fake_ambiguity" in judge_turn(said).flags


def test_an_unanswerable_turn_a_remaining_passage_answers_is_caught():
    held = [
        (
            "Advanced Usage › CA Certificates",
            "If REQUESTS_CA_BUNDLE is not set, Requests uses the bundle that certifi ships.",
        )
    ]
    question = "What happens if I set REQUESTS_CA_BUNDLE?"
    reply = "The documentation does not answer this: none of the documents covers it, so I cannot say."
    answered = ["Prepared Requests: the environment variable REQUESTS_CA_BUNDLE names the certificate bundle to trust."]
    unrelated = ["Sessions keep cookies across requests made from the same Session instance."]
    assert (
        "unanswerable_answered"
        in judge_turn(TurnEvidence(question, reply, "unanswerable", held_out=held, remaining_pool=answered)).flags
    )
    assert (
        "unanswerable_answered"
        not in judge_turn(TurnEvidence(question, reply, "unanswerable", held_out=held, remaining_pool=unrelated)).flags
    )


def test_containment_knows_a_class_by_its_inner_capitals():
    """A class name is a code name like a dotted one: a release note that names it answers."""
    held = ["The InlineProcessor class is the base class of inline patterns."]
    question = "Can you explain what the core InlineProcessor class is?"
    note = "Changed in version 3.0: InlineProcessor now receives the match object and the data."
    assert contains_answer(question, held, ["Lists are rendered by the sane lists extension.", note]) == note
    assert contains_answer(question, held, ["Lists are rendered by the sane lists extension."]) is None


def test_containment_reads_a_member_named_without_its_owner():
    """A page that names the member alone ("the inline_args attribute") may explain it: the unanswerable turn is
    refused. Another owner's member of that name, a member whose name is also a plain word, or a module's class
    used by its name, is no mention."""
    held = ["FactoryOptions.inline_args\n\nSome arguments of the model are passed positionally, in this order."]
    question = "Can you explain what FactoryOptions.inline_args is?"
    intro = (
        "Non-kwarg arguments\n\nSome classes take a few, non-kwarg arguments first. "
        "This is handled by the inline_args attribute:"
    )
    assert contains_answer(question, held, [intro]) == "This is handled by the inline_args attribute:"
    owned = "When would I use JSONTag.to_python?"
    tagged = ["Convert the JSON representation back to the correct type.", "Called by TagDict.to_python on each key."]
    assert contains_answer(owned, tagged[:1], [tagged[1]]) is None
    worded = "Can you explain what FactoryOptions.name is?"
    assert contains_answer(worded, held, ["Give each factory a short name in the same module."]) is None
    # a module's class is written without its module wherever it is used
    module_class = "What does the ipaddress.IPv4Network class represent?"
    used = "Example: collapse_addresses([IPv4Network('192.0.2.0/25')]) gives the one network covering both."
    assert contains_answer(module_class, ["A network definition."], [used]) is None


def test_containment_reads_the_answer_not_the_names():
    held = ["Registers a connection adapter to a prefix."]
    question = "How do I register a connection adapter for a prefix?"
    assert contains_answer(question, held, ["mount registers a connection adapter for a URL prefix on a session."])
    assert contains_answer(question, held, ["A Session object keeps cookies."]) is None


@pytest.mark.parametrize(
    "question, reply, klass",
    [
        (
            "What's the best way to override the default?",
            "You may override the default with the remote_branch setting.",
            "dangling_referent",
        ),
        (
            "What happens if I set verify to False?",
            "However, that is not recommended in production at all.",
            "dangling_referent",
        ),
        (
            "What happens if I define USE_CURL_MULTI?",
            "If USE_CURL_MULTI is not defined, this value will be capped at 1.",
            "reply_mismatch",
        ),
        ("What exactly is the index object?", "The index object was new in MkDocs version 1.0.", "reply_mismatch"),
        (
            "Is Section headers able to not span multiple lines?",
            "Section headers cannot span multiple lines.",
            "unaskable",
        ),
        (
            "If I open the file in text mode, what happens next?",
            "Requests may attempt to set the Content-Length header.",
            "unaskable",
        ),
        (
            "What does Quickstart cover?",
            "Response Content. We can read the content of the server's response.",
            "unaskable",
        ),
    ],
)
def test_what_readers_called_broken_is_flagged_in_its_class(question, reply, klass):
    gold = [("Guide › Section", reply)]
    assert klass in judge_turn(TurnEvidence(question, reply, gold=gold)).flags


def test_a_question_that_copies_seven_words_of_its_passage_is_caught():
    text = "If the message is being sent through a HTTP proxy, the full URL has to be used."
    turn = TurnEvidence("If the message is being sent through a HTTP proxy, what then?", text, gold=[("G", text)])
    assert "copies_passage" in judge_turn(turn).flags
    assert (
        "copies_passage"
        not in judge_turn(TurnEvidence("What URL is used with an HTTP proxy?", text, gold=[("G", text)])).flags
    )


def test_every_class_is_one_of_the_rubrics():
    assert len(GATE_CLASSES) == 7 and len(set(GATE_CLASSES)) == 7


# Turns the readers of the development half's round 3 called broken that the gate then passed
# (data/readings/development/*-offline-r3.jsonl): the rules added for them, each with a sound twin.
@pytest.mark.parametrize(
    "question, reply, klass",
    [
        (
            "What's the best way to replace the entire nav configuration?",
            "Of course, you can replace the entire nav configuration with a new one.",
            "reply_mismatch",
        ),
        (
            "What's the best way to perform a three-way merge?",
            "Git can help you perform a three-way merge, which can be used for a many-way merge.",
            "reply_mismatch",
        ),
        (
            "How do third party themes work?",
            "A list of third party themes can be found in the MkDocs community wiki.",
            "reply_mismatch",
        ),
        (
            "What does the --filename-max-length option of git format-patch do?",
            "Defaults to the value of the format.filenameMaxLength configuration variable, or 64.",
            "reply_mismatch",
        ),
        (
            "Can you explain other providers?",
            "Any hosting provider which can serve static files can be used.",
            "dangling_referent",
        ),
        (
            "Is there a way to share a it I create?",
            "If you want to share a theme you create, list it on the Wiki.",
            "unaskable",
        ),
        (
            "What does MkDocs use?",
            "MkDocs uses the Python-Markdown library to render Markdown documents to HTML.",
            "unaskable",
        ),
    ],
)
def test_what_readers_found_in_round_3_is_caught(question, reply, klass):
    gold = [("Guide", reply)]
    assert klass in judge_turn(TurnEvidence(question, reply, gold=gold)).flags


@pytest.mark.parametrize(
    "question, reply",
    [
        (
            "What's the best way to point MkDocs at a config file elsewhere?",
            "You can point MkDocs at a config file elsewhere by using the -f/--config-file option.",
        ),
        ("How do I deploy to Read the Docs?", "To deploy to Read the Docs, import your repository by using the form."),
        (
            "Where can I find third party themes?",
            "A list of third party themes can be found in the MkDocs community wiki.",
        ),
        ("Is it possible to compact the cache table?", "You can compact the cache table with the vacuum command."),
        (
            "What does MkDocs use to render Markdown documents?",
            "MkDocs uses the Python-Markdown library to render them.",
        ),
    ],
)
def test_their_sound_twins_pass(question, reply):
    flags = judge_turn(TurnEvidence(question, reply, gold=[("Guide", reply)])).flags
    assert not flags.keys() & {"reply_mismatch", "unaskable", "dangling_referent"}, flags


# Round 4 of the development half (data/readings/development/*-offline-r4.jsonl), each with a sound twin.
@pytest.mark.parametrize(
    "question, reply, klass",
    [
        ("git pull --force option", "This option overrides that check.", "dangling_referent"),
        (
            "Can you explain theme meta files?",
            "The various files required for packaging a theme are also ignored.",
            "dangling_referent",
        ),
        (
            "Can you explain client side certificates?",
            "The private key to your local certificate must be unencrypted.",
            "reply_mismatch",
        ),
    ],
)
def test_what_readers_found_in_round_4_is_caught(question, reply, klass):
    assert klass in judge_turn(TurnEvidence(question, reply, gold=[("Guide", reply)])).flags


@pytest.mark.parametrize(
    "question, reply",
    [
        (
            "What does the --force option of git pull do?",
            "This option overrides the check that the branch is an ancestor.",
        ),
        (
            "Can you explain client side certificates?",
            "Client side certificates identify the client to the server. You can also pass a tuple of files.",
        ),
    ],
)
def test_their_round_4_twins_pass(question, reply):
    flags = judge_turn(TurnEvidence(question, reply, gold=[("Guide", reply)])).flags
    assert not flags.keys() & {"reply_mismatch", "dangling_referent"}, flags


def test_a_copy_with_its_verb_or_pronoun_changed_is_still_a_copy():
    passage = ("Guide", "To localize a theme to your favorite language, follow the guide on Translating Themes.")
    copied = TurnEvidence(
        "What's the best way to localize a theme to my favorite language?",
        "To localize a theme to your favorite language, follow the guide.",
        gold=[passage],
    )
    assert "copies_passage" in judge_turn(copied).flags
    asked = TurnEvidence("How do I translate a theme?", "Follow the guide on Translating Themes.", gold=[passage])
    assert "copies_passage" not in judge_turn(asked).flags


def test_two_words_run_together_are_caught_only_where_the_passage_has_them_apart():
    passage = 'You can set the config variable "core.autocrlf" without using any attributes.'
    fused = TurnEvidence(
        "Can I set the config variable core.autocrlfwithout using any attributes?",
        passage,
        gold=[("gitattributes", passage)],
    )
    assert "unaskable" in judge_question(fused).flags
    term = TurnEvidence("Can I set the whitespace option?", "Yes.", gold=[("x", "Set the whitespace option.")])
    assert "unaskable" not in judge_question(term).flags


@pytest.mark.parametrize(
    "question",
    ["Do Transport Adapters provide a mechanism?", "Is it possible to take advantage?", "Can I get direct access?"],
)
def test_a_question_whose_complement_was_cut_off_is_unaskable(question):
    turn = TurnEvidence(
        question,
        "Transport adapters provide a mechanism to define interaction methods.",
        gold=[("Advanced", "Transport adapters provide a mechanism to define interaction methods.")],
    )
    assert "unaskable" in judge_turn(turn).flags


def test_a_relational_noun_with_its_complement_is_askable():
    turn = TurnEvidence(
        "Is there a mechanism for retrying failed requests?",
        "Mount an HTTPAdapter with max_retries set to retry failed requests.",
        gold=[("Advanced", "Mount an HTTPAdapter with max_retries set to retry failed requests.")],
    )
    assert "unaskable" not in judge_turn(turn).flags


@pytest.mark.parametrize(
    "reply",
    [
        "Why would a GET need more than the method and the URL as its key?",
        "Let's walk through an example: a GET is cached under its method and URL.",
    ],
)
def test_a_reply_that_asks_back_or_walks_through_an_example_does_not_answer(reply):
    gold = [("Caching", "The cache stores responses under a key made of the method and the URL.")]
    turn = TurnEvidence("Which parts of a request make up a response's cache key?", reply, gold=gold)
    assert "asks a question or walks through an example" in judge_turn(turn).flags["reply_mismatch"]


def test_a_reply_on_the_option_a_no_option_turns_off_is_a_mismatch():
    gold = [("git merge", "Invoke an editor before committing successful mechanical merge.")]  # no entry parsed
    wrong = TurnEvidence(
        "What does the --no-edit option of git merge do?",
        "Invoke an editor before committing successful mechanical merge.",
        gold=gold,
    )
    right = TurnEvidence(
        "What does the --no-edit option of git merge do?",
        "The --no-edit option accepts the auto-generated message without an editor.",
        gold=gold,
    )
    assert "turns off" in judge_turn(wrong).flags["reply_mismatch"]
    assert "reply_mismatch" not in judge_turn(right).flags


def test_a_prose_reply_on_an_unnamed_definite_thing_dangles_and_a_named_one_does_not():
    gold = [("Themes", "The zero-based level of the item.")]
    dangling = TurnEvidence("What does the nesting level hold?", "The zero-based level of the item.", gold=gold)
    named = TurnEvidence(
        "What does the nesting level of a navigation item hold?", "The zero-based level of the item.", gold=gold
    )
    assert "dangling_referent" in judge_turn(dangling).flags
    assert "dangling_referent" not in judge_turn(named).flags


def test_a_version_note_is_no_reply_and_a_one_letter_name_is_no_question():
    gold = [("API Reference", "class pathlib.Path\n\nNew in version 6.1.")]
    assert (
        "version note"
        in judge_turn(
            TurnEvidence("What does the pathlib.Path class represent?", "New in version 6.1.", gold=gold)
        ).flags["reply_mismatch"]
    )
    example = [("Fixtures", "In the last example, the graph became unclear if d didn't request c.")]
    flags = judge_turn(
        TurnEvidence("What should I expect if d didn't request c?", "The graph became unclear.", gold=example)
    ).flags
    assert "one-letter name" in flags["unaskable"]
    option = [("pytest", "-k EXPRESSION\n\nOnly run tests which match the given substring expression.")]
    assert (
        "unaskable"
        not in judge_turn(
            TurnEvidence(
                "What does the -k option of the pytest command do?",
                "Only run tests which match the given substring expression.",
                gold=option,
            )
        ).flags
    )  # an option's letter is no placeholder


def test_an_option_asked_by_one_of_its_names_is_answered_by_its_entry():
    gold = [("pytest", "-x\n\nStop on first failure.\n\n-v, --verbose\n\nIncrease verbosity.")]
    alias = TurnEvidence("What does the -v option of pytest do for my runs?", "Increase verbosity.", gold=gold)
    other = TurnEvidence("What does the -x option of pytest do for my runs?", "Increase verbosity.", gold=gold)
    assert "reply_mismatch" not in judge_turn(alias).flags
    assert "answers about --verbose" in judge_turn(other).flags["reply_mismatch"]


def test_a_reply_that_announces_a_list_it_does_not_show_dangles():
    gold = [("Plugins", "Here is a list of plugins that ship with pytest. cacheprovider keeps state across runs.")]
    turn = TurnEvidence(
        "Which plugins ship with pytest by default?", "Here is a list of plugins that ship with pytest.", gold=gold
    )
    assert "announces what it does not show" in judge_turn(turn).flags["dangling_referent"]


def test_an_overview_answered_with_where_to_look_is_a_mismatch():
    gold = [("Configuration", "Consult the reference documentation for the builtin configuration options.")]
    turn = TurnEvidence(
        "Can you give me an overview of builtin configuration options?",
        "Consult the reference documentation for the builtin configuration options.",
        gold=gold,
    )
    assert "says where to look" in judge_turn(turn).flags["reply_mismatch"]


def test_every_frame_of_the_offline_questioner_asks_about_a_noun_phrase_topic_as_one():
    # the gate must not refuse the questioner's own frames ("What is stored in X?" is a passive, not a topic)
    slots = {
        "entry": "Request.values",
        "an_entry": "a ValueError",
        "thing": "the request context",
        "is": "is",
        "Is": "Is",
        "vp": "set up logging",
        "clause": "I pass a timeout",
        "mark": "if",
        "Mark": "If",
        "error": "ValueError",
        "an_error": "a ValueError",
        "raiser": "json.loads",
        "of_owner": " of flask run",
        "parameter": "timeout",
        "a": "Session.get",
        "b": "Session.request",
        "affected": "the json parameter",
    }
    filled = collections.defaultdict(lambda: "", slots)
    asked = [frame.template.format_map(filled) for frames in FRAMES.values() for frame in frames]
    assert len(asked) > 40
    refused = {
        question: reason
        for question in asked
        if (reason := topic_not_noun_phrase(TurnEvidence(question[:1].upper() + question[1:], "x")))
    }
    assert refused == {}


@pytest.mark.parametrize(
    ("question", "reply", "previous"),
    [
        ("What happens if I provide no ids?", "If no ids are provided they will be generated automatically.", ()),
        ("What should I expect if I give a pattern?", "If a pattern is given, only matching refs are shown.", ()),
        ("What should I expect if I don't use the setpos() method?", "The seek() method is not necessary.", ()),
    ],
)
def test_a_first_question_on_what_it_never_names_dangles(question, reply, previous):
    assert "dangling_referent" in judge_turn(TurnEvidence(question, reply, previous=previous)).flags


@pytest.mark.parametrize(
    ("question", "reply", "previous"),
    [
        # a context, a code name, or a conversation that names it says of what
        ("In git clone, what happens if I provide no pathspec?", "If no pathspec is provided, all are cloned.", ()),
        ("What happens if I pass verify=False?", "If verify is set to False, any certificate is accepted.", ()),
        (
            "What happens if I provide no ids?",
            "If no ids are provided they will be generated automatically.",
            (("How do I parametrize a test?", "Use pytest.mark.parametrize; ids name each case."),),
        ),
        ("What should I expect if I don't use the aifc.setpos() method?", "The seek() method is not necessary.", ()),
    ],
)
def test_a_condition_or_method_the_question_places_does_not_dangle(question, reply, previous):
    assert "dangling_referent" not in judge_turn(TurnEvidence(question, reply, previous=previous)).flags


def test_a_reply_of_version_notes_or_of_what_the_user_must_do_says_not_what_it_is():
    def flags(question: str, reply: str) -> dict[str, str]:
        return judge_turn(TurnEvidence(question, reply)).flags

    assert "reply_mismatch" in flags("What does src_paths hold?", "Soft-deprecated, prefer src_uris.")
    assert "reply_mismatch" in flags("What does xunit2 hold?", "New in version 3.5. Changed in version 5.4: added.")
    assert "reply_mismatch" not in flags("What does src_uri hold?", "The URI of the source file. New in version 1.5.")
    assert "reply_mismatch" not in flags("What is sdist.check_metadata for?", "Deprecated: use check for the metadata.")
    must = "You will need to either disable the search plugin, or use a third-party search plugin."
    assert "reply_mismatch" in flags("What does use_directory_urls hold?", must)
    named = "You will need to set use_directory_urls to false when opening pages from the file system."
    assert "reply_mismatch" not in flags("What does use_directory_urls hold?", named)


def test_a_reply_that_says_only_where_an_option_applies_does_not_say_what_it_does():
    scope = "Only used with the git svn dcommit, set-tree and commit-diff commands."
    assert "reply_mismatch" in judge_turn(TurnEvidence("What is --rmdir for in git svn?", scope)).flags
    described = f"{scope} Remove directories from the SVN tree if there are no files left behind."
    assert "reply_mismatch" not in judge_turn(TurnEvidence("What is --rmdir for in git svn?", described)).flags
    # asked when to use it, where it applies is the answer
    assert "reply_mismatch" not in judge_turn(TurnEvidence("When should I use --rmdir with git svn?", scope)).flags


def test_a_definition_of_a_subject_the_question_cut_short_is_a_mismatch():
    narrowed = "Support for these types of regular expressions is an optional compile-time feature."
    assert "reply_mismatch" in judge_turn(TurnEvidence("What exactly is Support?", narrowed)).flags
    whole = "A hook wrapper is a generator function which yields exactly once."
    assert "reply_mismatch" not in judge_turn(TurnEvidence("Can you explain what a hook wrapper is?", whole)).flags


def test_what_is_meant_by_a_thing_asks_what_the_thing_is():
    # a model's wording: its topic is the thing, not "meant by ..." (a clause), and the reply must define it
    question = "What is meant by a write-ahead log checkpoint?"
    defined = "A write-ahead log checkpoint is the moment when the log is copied back into the database."
    assert judge_turn(TurnEvidence(question, defined, gold=[("Checkpoints", defined)])).flags == {}
    elsewhere = "Call connection.checkpoint() to force one."
    assert "reply_mismatch" in judge_turn(TurnEvidence(question, elsewhere, gold=[("Checkpoints", elsewhere)])).flags


def test_a_reply_for_a_case_the_question_never_names_is_a_mismatch():
    case = "If the remote server is very slow, you can tell Requests to wait forever for a response."
    assert "reply_mismatch" in judge_turn(TurnEvidence("Is it possible to tell Requests?", case)).flags
    asked = "If you want to share a theme you create, you should list it on the wiki."
    assert "reply_mismatch" not in judge_turn(TurnEvidence("Is there a way to share a theme I create?", asked)).flags


FILTERS = (
    "List of Builtin Filters",
    "jinja-jinja-filters.length(obj, /)\n\nReturn the number of items in a container.\n\n"
    "jinja-jinja-filters.reject(value, *args)\n\nFilters a sequence of objects by applying a test to each object, "
    "and rejecting the objects with the test succeeding.\n\n"
    "jinja-jinja-filters.unique(value, case_sensitive=False)\n\nReturns a list of unique items.\n\n"
    "Parameters:\n\ncase_sensitive – Treat upper and lower case strings as distinct.\n",
)


@pytest.mark.parametrize(
    "question, reply",
    [
        ("What is the length filter for?", "Return the number of items in a container."),
        ("Can you explain what the reject filter is?", FILTERS[1].split("\n\n")[3]),
        (
            "What does the case_sensitive argument of the unique filter control?",
            "Treat upper and lower case strings as distinct.",
        ),
    ],
)
def test_an_entry_named_by_its_kind_is_asked_about_like_a_code_name(question, reply):
    """A custom documentation domain's entries ("the length filter") carry no code-name marks: the
    gate reads them off the gold's entries, so their questions are no fragments and their
    descriptions answer them."""
    assert judge_turn(TurnEvidence(question, reply, gold=[FILTERS])).flags == {}
    other = "Returns a list of unique items."
    assert "reply_mismatch" in judge_turn(TurnEvidence("What is the length filter for?", other, gold=[FILTERS])).flags


@pytest.mark.parametrize(
    ("question", "reply", "gold"),
    [
        # a return value is the named function's; a second name or an "In X," scope names the owner
        ("get_serializer_class return value", "Returns the class that should be used for the serializer.", ()),
        (
            "git fetch-pack --refetch option",
            "Skips negotiating commits with the server in order to fetch all objects.",
            (),
        ),
        (
            "In git bisect, what happens if I don't set the DISPLAY environment variable?",
            "If the DISPLAY environment variable is not set, git log is used instead.",
            (),
        ),
        # a condition about a third thing names what it is about
        ("What should I expect if chardet is installed?", "If chardet is installed, requests uses it.", ()),
        # a type answers what a thing returns
        ("on_env return value", "Optional[jinja2.Environment]", ()),
        # a purpose clause with an instruction, and a recommendation, say how
        (
            "What's the best way to use a bytecode cache?",
            "To use a bytecode cache, instantiate it and pass it to the Environment.",
            (),
        ),
        (
            "What's the best way to write my own theme?",
            "If you wish to write your own theme, it is recommended to start with one of the built-in themes.",
            (),
        ),
    ],
)
def test_turns_readers_called_ok_that_rules_once_flagged_pass(question, reply, gold):
    assert judge_turn(TurnEvidence(question, reply, gold=list(gold))).flags == {}


@pytest.mark.parametrize(
    ("question", "reply", "klass"),
    [
        ("Is it possible to set a chunk_size parameter?", "Yes, set it to the size you need.", "dangling_referent"),
        (
            "What happens if I provide no ids?",
            "If no ids are provided they will be generated automatically.",
            "dangling_referent",
        ),
        (
            "What's the best way to replace the entire nav configuration?",
            "Of course, you can replace the entire nav configuration with a new one.",
            "reply_mismatch",
        ),
    ],
)
def test_the_narrowed_rules_still_catch_what_readers_called_broken(question, reply, klass):
    assert klass in judge_turn(TurnEvidence(question, reply)).flags


def test_a_member_inherited_in_the_same_words_answers_and_another_of_its_name_does_not():
    """The answer to a question on an entry is what the held-out passage documents under it, not the heading that
    shares its class's name; another class's member of the same name, described in those words (a base class's
    method the subclass inherits), answers it."""
    held = [
        "FastSketch API\n\nclass quill.FastSketch(source=None, name=None)\n\n"
        "quill.FastSketch.prepare(escape_func=None, **options)\n\n"
        "Run preparations (parsing, caching, …). It should be possible to call this again to refresh a sketch.\n\n"
        "quill.FastSketch.render(*args, **kwargs)\n\nRender the sketch using keyword arguments as local variables."
    ]
    question = "Why would I call FastSketch.prepare?"
    assert answer_sentence(question, held) == "Run preparations (parsing, caching, …)."
    inherited = (
        "Sketches\n\nclassmethod quill.BaseSketch.global_config(key, *args)\n\nThis reads or sets the global "
        "settings.\n\nquill.BaseSketch.prepare(**options)\n\nRun preparations (parsing, caching, …). It should be "
        "possible to call this again to refresh a sketch or to update settings."
    )
    assert contains_answer(question, held, [inherited]) == "Run preparations (parsing, caching, …)."
    namesake = "quill.Printer.prepare()\n\nWarm up the paper feed before the first page is printed."
    assert contains_answer(question, held, [namesake]) is None
    # a sibling that says part of it of other data is no inherited method
    sibling = "quill.Tray.prepare()\n\nRun preparations (parsing, …) of the paper tray."
    assert contains_answer(question, held, [sibling]) is None


def test_a_general_question_the_corpus_discusses_elsewhere_counts_as_answered():
    """A question naming no code name, each of whose topic words recurs in several remaining
    passages, asks what the corpus discusses: offline its answer cannot be shown missing."""
    held = ["You can find the storage connection string in the result backend settings."]
    question = "Can I find the storage connection string?"
    # each passage holds every topic word, but no sentence of one answers the question by itself
    discussing = [
        f"You find the storage settings in file {n}. Each connection string is read at startup." for n in range(5)
    ]
    assert contains_answer(question, held, discussing)
    assert contains_answer(question, held, discussing[:4]) is None  # one passage short of the bound
    # a code name is read for by name, not by how often its words recur
    named = "Can I find the storage connection string of CELERY_RESULT_BACKEND?"
    assert contains_answer(named, held, discussing) is None


def test_a_general_question_is_about_its_noun_phrases_not_the_verb_that_asks_it():
    """A page's held-out summary is no unanswerable turn while the page's other sections remain:
    the question's verb ("add") is how it asks, and passages need not repeat it."""
    held = ["The Meta-Data extension adds a syntax for defining meta-data about a document."]
    question = "What does the Meta-Data extension add?"
    remaining = [f"Section {n}: the Meta-Data extension makes the meta-data available as a dict." for n in range(5)]
    assert contains_answer(question, held, remaining)
    other_topic = [f"Section {n}: the Tables extension renders a table as HTML." for n in range(5)]
    assert contains_answer(question, held, other_topic) is None
