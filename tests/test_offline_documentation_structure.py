"""The offline questioner reads the structure of documentation (agents/offline/, benchsmith/entries.py):
which row of a table or definition list a sentence belongs to, which sentences lean on an example or a
step the reply leaves out, and which thing a question names when its statement documents an entry.
(Development readings round 12: jinja2, werkzeug, celery.)"""

from __future__ import annotations

from benchsmith.agents.offline.asking import answer, self_contained
from benchsmith.agents.offline.facts import passage_facts
from benchsmith.agents.offline.facts.referents import leans_on_context
from benchsmith.agents.offline.wording import wordings
from benchsmith.entries import entry_of_line, statements
from benchsmith.language import parse


def described(text: str, title: str = "Reference › Page") -> dict[str | None, list[str]]:
    """Each entry's statements, as read."""
    found: dict[str | None, list[str]] = {}
    for statement in statements(text, title):
        found.setdefault(statement.entry, []).append(statement.text)
    return found


def replies(text: str, title: str = "Reference › Page") -> dict[str, str]:
    """Each question the passage gives, with its reply."""
    gold = {"text": text, "title": title}
    return {
        wording.question: answer(gold, wording.question) or ""
        for fact in passage_facts(text, title)
        for wording in wordings(fact)
    }


def test_a_class_attribute_line_with_its_value_opens_its_own_entry():
    # Sphinx writes a class attribute with its value; its description is not the method's above it
    text = (
        "celery.beat.ScheduleEntry.is_due()\n\nSee is_due().\n\n"
        "celery.beat.ScheduleEntry.kwargs = None\n\nKeyword arguments to apply.\n"
    )
    read = described(text)
    assert read["celery.beat.ScheduleEntry.kwargs"] == ["Keyword arguments to apply."]
    assert "celery.beat.ScheduleEntry.is_due" not in read
    assert entry_of_line("app.conf.timezone = 'UTC'") is None  # an example's assignment is no entry


def test_the_next_row_of_a_table_is_not_the_description_of_a_key_whose_row_ends_with_its_value():
    text = (
        "Setting name\n\nReplace with\n\nCELERY_AMQP_PUBLISHER_ROUTING_KEY\n\ntask_default_routing_key\n\n"
        "CELERY_LOADER definitions without class name are deprecated for a reason.\n"
    )
    assert "CELERY_AMQP_PUBLISHER_ROUTING_KEY" not in described(text)
    assert not any("CELERY_AMQP_PUBLISHER_ROUTING_KEY" in question for question in replies(text))


def test_the_aside_that_tells_two_rows_apart_stays_with_its_row():
    text = (
        "Variable\n\nDescription\n\nloop.index\n\nThe current iteration of the loop. (1 indexed)\n\n"
        "loop.index0\n\nThe current iteration of the loop. (0 indexed)\n"
    )
    read = described(text)
    assert read["loop.index"] == ["The current iteration of the loop. (1 indexed)"]
    assert read["loop.index0"] == ["The current iteration of the loop. (0 indexed)"]


def test_two_entries_described_alike_are_told_apart_by_their_next_sentence_or_not_asked():
    text = (
        "loop.depth\n\nIndicates how deep in a recursive loop the rendering currently is. Starts at level 1\n\n"
        "loop.depth0\n\nIndicates how deep in a recursive loop the rendering currently is. Starts at level 0\n"
    )
    said = [reply for question, reply in replies(text).items() if "loop.depth" in question]
    assert said and all("Starts at level" in reply for reply in said)


def test_a_custom_domains_entry_is_named_with_its_kind_and_its_parameters_under_it():
    text = (
        "jinja-jinja-filters.wordwrap(s: str, width: int = 79, break_on_hyphens: bool = True) \u2192 str\n\n"
        "Wrap a string to the given width.\n\nParameters:\n\n"
        "break_on_hyphens \u2013 If a word contains hyphens, it may be split across lines.\n"
    )
    assert entry_of_line(text.split("\n")[0]).name == "wordwrap"
    questions = replies(text, "Template Designer Documentation › List of Builtin Filters")
    assert "What is the wordwrap filter for?" in questions
    assert questions["What is the wordwrap filter for?"] == "Wrap a string to the given width."


def test_a_statement_of_an_entry_is_asked_about_the_entry_not_the_section_that_lists_it():
    question = "What happens if a word contains hyphens?"
    title = "Template Designer Documentation › List of Builtin Filters"
    assert self_contained(question, title, situated=True, entry="wordwrap", entry_kind="filter") == (
        "In the wordwrap filter, what happens if a word contains hyphens?"
    )
    assert self_contained("What does the wordwrap filter do?", title, entry="wordwrap", entry_kind="filter") == (
        "What does the wordwrap filter do?"
    )
    # a title in capitals that names a part of the manual is no context either
    assert not self_contained("What happens if the cache is full?", "API › Basics").startswith("In API")


def test_a_background_sentence_or_an_instruction_is_not_what_an_entry_is_for():
    for first in (
        "Jinja keeps internal caches for environments and lexers.",
        "To implement your own bytecode cache you have to subclass this class and override load_bytecode().",
    ):
        text = f"jinja2.clear_caches()\n\n{first} These are used so that nothing is recreated all the time.\n"
        assert not [fact for fact in passage_facts(text, "API › Utilities") if fact.kind == "purpose"], first


def test_an_exception_described_by_its_place_among_others_is_not_asked_when_one_gets_it():
    text = "exception jinja2.TemplateError(message=None)\n\nBaseclass for all template errors.\n"
    questions = replies(text, "API › Exceptions")
    assert questions and not any(question.startswith(("Why would I get", "When is")) for question in questions)


def test_a_sentence_that_leans_on_an_omitted_example_or_step_is_no_reply():
    for sentence in (
        "The contents of the folder ./shared will now be available on http://example.com/shared/.",
        "After that you can render Jinja templates by using the render_jinja function.",
        "Even with that limitation, it is an excellent choice if you need state changes in real-time.",
        "The rest will be verified by GitHub Actions when you submit a pull request.",
        "If it does not match anything, it will raise a NotFound exception.",
        "If False, read() will raise OSError.",
        "Both of these methods are passed a Bucket.",
        "A string then means it is a queue name in task_queues.",
    ):
        assert leans_on_context(parse(sentence), frozenset({"method"})), sentence
    for sentence in (
        "It is possible to use a custom loader for templates.",
        "If the session closes, it raises a ConnectionError.",
        "If verify is False, requests accepts any certificate.",
    ):
        assert leans_on_context(parse(sentence)) is None, sentence
    # a parameter's description leaves out its subject: the parameter
    assert leans_on_context(parse("If False, the value is not escaped."), parameter=True) is None


def test_a_passage_whose_example_is_left_out_gives_no_reply_that_points_at_it():
    text = (
        "class werkzeug.middleware.shared_data.SharedDataMiddleware(app, exports)\n\n"
        "A WSGI middleware which provides static content for development environments.\n\n"
        "```python\napp = SharedDataMiddleware(app, {'/shared': 'shared'})\n```\n\n"
        "The contents of the folder ./shared will now be available on http://example.com/shared/.\n"
    )
    assert not any("./shared" in reply for reply in replies(text, "Serve Shared Static Files").values())


def test_a_field_named_like_a_label_under_an_entry_is_not_asked_about_alone():
    text = (
        "import_modules\n\nThis signal is sent when a program asks for modules to be imported.\n\n"
        "Sender is the app instance.\n"
    )
    questions = replies(text, "Signals › App Signals › import_modules")
    assert not any("Sender" in question for question in questions)


def test_a_condition_on_a_bare_flag_outside_any_entry_is_not_asked():
    text = (
        "Generates some lorem ipsum for the template. If html is False, regular text is returned. "
        "This is useful to generate simple contents for layout testing.\n"
    )
    assert not any("html is False" in question for question in replies(text, "Templates › List of Global Functions"))


def test_a_concessive_or_a_judgement_gives_no_condition():
    for sentence in (
        "Even if you are creating templates from strings, an environment is created for you.",
        "It's useful to have multiple environments side by side, if different configurations are in use.",
    ):
        assert not [f for f in passage_facts(sentence, "API › Basics") if f.kind == "condition"], sentence


def test_a_members_typed_line_opens_its_own_entry_and_takes_its_description():
    text = (
        "pytest.python.FunctionDefinition.runtest()\n\nExecute the underlying test function.\n\n"
        "pytest.python.FunctionDefinition.name: str\n\nA unique name within the scope of the parent node.\n"
    )
    read = described(text)
    assert read["pytest.python.FunctionDefinition.runtest"] == ["Execute the underlying test function."]
    assert read["pytest.python.FunctionDefinition.name"] == ["A unique name within the scope of the parent node."]


def test_an_example_call_is_no_entry_and_a_value_is_not_asked_when_it_is_useful():
    assert entry_of_line("add.apply_async((2, 2), link=add.s(16))") is None
    assert entry_of_line("requests.get(url, params=None, **kwargs)").name == "requests.get"
    text = (
        "class werkzeug.datastructures.IfRange(etag=None)\n\nproperty IfRange.etag\n\nThe etag parsed and unquoted.\n"
    )
    questions = replies(text, "Data Structures › IfRange")
    assert questions and not any("useful" in question for question in questions)


def test_a_follow_up_refers_to_a_named_kind_of_thing_as_it():
    from benchsmith.agents.polisher import refer_back

    question = "What does the celery.signature class represent?"
    assert refer_back(question, "celery.signature", "celery.signature") == "What does it represent?"


def test_a_light_verb_on_any_one_thing_or_on_a_quoted_phrase_is_no_task():
    for sentence in (
        "To use an expression, bind it to a name in the trans tag for use in the block.",
        "You can use \u201cnew style\u201d gettext calls by setting env.newstyle_gettext = True.",
    ):
        assert not [f for f in passage_facts(sentence, "Extensions › i18n") if f.kind == "procedure"], sentence
    assert [
        f for f in passage_facts("To use a bytecode cache, pass it to the Environment.", "API") if f.kind == "procedure"
    ]


def test_a_section_that_continues_the_one_before_or_opens_on_a_pointer_is_not_asked_about():
    for text in (
        "Other Providers\n\nAny hosting provider which can serve static files can be used to serve documentation.\n",
        "Package Layout\n\nThe following layout is recommended for themes.\n",
    ):
        title = f"Deploying › {text.split(chr(10))[0]}"
        assert not [f for f in passage_facts(text, title) if f.kind == "section"], text


def test_code_names_that_differ_only_by_case_are_two_things_to_a_follow_up():
    from benchsmith.agents.polisher import refer_back

    question = "What problem does celery.signature solve?"
    assert refer_back(question, "celery.signature", "celery.Signature") == question


def test_a_field_list_under_a_modules_title_is_not_the_modules():
    text = "Returns:\n\nThe attribute value, or None if not found.\n"
    assert [s.entry for s in statements(text, "celery.utils.objects") if s.role == "returns"] == [None]


def test_a_wish_answered_by_a_pointer_to_another_guide_is_no_how_to():
    text = (
        "If you want to remove files, or build a theme from scratch, then you should review the Theme Developer Guide."
    )
    assert not [f for f in passage_facts(text, "Customizing Your Theme") if f.kind == "procedure"]


def test_a_signature_with_a_tuple_default_or_a_domain_after_its_kind_word_opens_its_entry():
    # Read as example calls, these lines opened no entry, and their descriptions ran into the replies of the
    # entries above them (werkzeug's set_digest, jinja2's joiner: development round 14 ungated readings).
    text = (
        "set_basic(realm='authentication required')\n\nClear any existing data and set a basic auth challenge.\n\n"
        "set_digest(realm, nonce, qop=('auth',), opaque=None)\n\nClear any existing data and set a digest challenge.\n"
    )
    read = described(text)
    assert read["set_basic"] == ["Clear any existing data and set a basic auth challenge."]
    assert read["set_digest"] == ["Clear any existing data and set a digest challenge."]
    joiner = entry_of_line("class jinja-jinja-globals.joiner(sep=', ')")
    assert joiner is not None and (joiner.name, joiner.kind) == ("joiner", "class")
    assert entry_of_line("add.apply_async((2, 2), link=add.s(16))") is None  # still an example's call


def test_what_follows_a_list_of_names_is_the_sections_not_the_last_names():
    # names listed as code lines, then a sentence about them or about the section: "Never - ..." answered what
    # Cmd.ppaged is for (cmd2, development round 16)
    text = (
        "The allow_style setting controls the output of these methods:\n\ncmd2.Cmd.poutput()\n\ncmd2.Cmd.perror()\n\n"
        "cmd2.Cmd.ppaged()\n\nThis setting can be one of three values:\n\n"
        "Never - all ANSI escape sequences are stripped from the output.\n\n"
        "cmd2.utils.align_left()\n\ncmd2.utils.align_right()\n\n"
        "These functions differ from Python's string justifying functions in their handling of wide characters.\n"
    )
    said = {statement.text: statement.entry for statement in statements(text, "Settings › allow_style")}
    assert said["Never - all ANSI escape sequences are stripped from the output."] == "allow_style"
    assert not any(entry and "align_right" in entry for entry in said.values()), said
    # an API page's undocumented member runs into the next one's description, which stays that entry's
    api = "requests.Response\n\nrequests.delete(url, **kwargs)\n\nSends a DELETE request and returns the response.\n"
    assert [(s.entry, s.role) for s in statements(api, "Developer Interface")] == [("requests.delete", "first")]
    # "This means ..." says again what the last entry does
    changed = (
        "celery.Task.apply()\n\ncelery.Task.retry()\n\nThis means that the task is sent to the queue again later.\n"
    )
    assert [s.entry for s in statements(changed, "API")] == ["celery.Task.retry"]


def test_a_sentence_that_ends_a_line_left_open_is_no_instruction():
    # an admonition's title kept as a line ("!!! check "Inspired Typer to""): the paragraph after it ends that
    # line's sentence, what Hug inspired, not what a user does (typer's sources, test half: three turns read broken)
    text = (
        "Hug is a library to create APIs and CLIs.\n\nInspired Typer to\n\n"
        "Use function parameters to declare CLI arguments and CLI options.\n"
    )
    read = statements(text, "Previous tools › Hug")
    assert [statement.whole for statement in read] == [True, False, False]
    assert not [fact for fact in passage_facts(text, "Previous tools › Hug") if fact.kind == "procedure"]
    # the same instruction after a closed line stands on its own and is asked
    closed = text.replace("Inspired Typer to", "Typer does the same.")
    assert [statement.whole for statement in statements(closed, "Previous tools › Hug")] == [True, True, True]
    assert [fact.topic for fact in passage_facts(closed, "Previous tools › Hug") if fact.kind == "procedure"]
    # only the line's second half: when that sentence is no statement (too short), the next one stands on its own
    short = text.replace("Use function parameters", "Use them. Use function parameters")
    assert [statement.whole for statement in statements(short, "Previous tools › Hug")] == [True, False, True]
    # a line ending in a determiner that is no article ends its sentence: "Try this"
    assert [statement.whole for statement in statements(text.replace("Inspired Typer to", "Try this"))][-1]
