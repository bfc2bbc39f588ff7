"""The offline questioner asks only what a passage says whole (agents/offline/, benchsmith/entries.py,
benchsmith/passages.py): a task the user performs, not the tool's reason for working as it does; a phrase
not cut inside a word, a list or a pairing; an entry named by documentation, not by an example's code or
an epigraph. (Development readings round 12: git, celery, mkdocs, pytest; drf, round 13.)"""

from __future__ import annotations

from benchsmith.agents.offline.asking import without_context
from benchsmith.agents.offline.facts import passage_facts
from benchsmith.agents.offline.headings import context_name
from benchsmith.agents.offline.wording import wordings
from benchsmith.agents.polisher import refer_back
from benchsmith.entries import entry_of_line, statements
from benchsmith.passages import units


def questions(text: str, title: str = "Guide › Page") -> list[str]:
    return [wording.question for fact in passage_facts(text, title) for wording in wordings(fact)]


def asked_about(text: str, words: str, title: str = "Guide › Page") -> bool:
    return any(words in question for question in questions(text, title))


def test_a_purpose_whose_main_clause_is_the_tools_doing_is_no_task_of_the_users():
    # why the tool works as it does: nothing a user does to "conserve space"
    assert not asked_about("To conserve space, file and tree names are pooled in a common string table.", "space")
    assert not asked_about(
        "To aid in debugging frontends fast-import ignores any line that begins with # up to the line ending.",
        "debugging frontends",
    )
    # an instruction (whatever the tagger calls "set"), the user as subject, or a modal: a procedure
    assert asked_about("To disable SSL verification, set the verify argument to False.", "disable SSL verification")
    assert asked_about("To add a custom header, you need to pass a dict to headers.", "add a custom header")
    assert asked_about("To enable compression, the COMPRESS_LEVEL setting can be changed.", "enable compression")


def test_a_phrase_cut_inside_a_word_a_pairing_or_a_list_of_verbs_is_not_asked():
    cut_word = (
        "When your custom authenticator is invoked by the request object's .user or .auth properties, "
        "you may see an AttributeError re-raised as a WrappedAttributeError."
    )
    assert not any(question.rstrip("?").endswith("-") for question in questions(cut_word))
    both = "Multiple throttles can also be used if you want to impose both burst throttling rates, and sustained rates."
    assert not asked_about(both, "both burst")
    verbs = "If we want to be able to create, edit and delete snippets, we'll need to authenticate as a valid user."
    assert not asked_about(verbs, "able to create")
    assert asked_about("You can compare both files with git diff.", "compare both files")  # "both" alone is whole


def test_an_object_told_what_to_do_keeps_what_it_is_told():
    text = "Submodules are not checked out by default; you can instruct clone to recurse into submodules."
    assert not any(question.rstrip("?").endswith("instruct clone") for question in questions(text))
    assert asked_about(text, "instruct clone to recurse into submodules")


def test_things_the_text_showed_before_or_any_one_of_a_kind_are_no_topic():
    assert not asked_about("We can remove the three views, and again replace them with a single class.", "views")
    assert not asked_about("You can edit any snippets once you log in.", "snippets")
    assert not asked_about("The ith value is the modification time of the ith object in the pack.", "ith value")


def test_a_condition_keeps_how_the_action_is_done():
    # the parser hands "commercially" to the main clause: "if I use REST framework" would be another condition
    text = "If you use REST framework commercially we strongly encourage you to invest in its continued development."
    assert not asked_about(text, "if I use REST framework?")
    assert asked_about("If verify is set to False, requests accepts any certificate.", "if I set verify to False")


def test_a_setting_or_a_quantified_subject_raises_nothing():
    setting = (
        "worker_lost_wait\n\nDefault: 10.0 seconds.\n\nThis value specifies how long we wait for any missing results "
        "before raising a WorkerLostError exception."
    )
    assert not asked_about(setting, "worker_lost_wait raise", "Configuration › worker_lost_wait")
    assert asked_about(setting, "WorkerLostError", "Configuration › worker_lost_wait")  # why one gets it, still
    anything = (
        "Any settings provided by the user which fail validation will raise a mkdocs.config.base.ValidationError."
    )
    assert not asked_about(anything, "any settings")


def test_a_description_without_a_verb_answers_what_an_option_is_not_when_to_pass_it():
    text = "--identity <identity>\n\nA configuration identity.\n"
    asked = questions(text, "git-send-email(1) Manual Page › OPTIONS")
    assert asked and not any(question.startswith(("When should I use", "Why would I pass")) for question in asked)


def test_an_examples_code_opens_no_entry():
    fenced = (
        "Quit out of the shell...\n\n```\nquit()\n```\n\nHttpie is a user friendly http client written in Python.\n"
    )
    assert {statement.entry for statement in statements(fenced, "Tutorial › Testing")} == {None}
    assert any(unit.fenced for unit in units(fenced))
    # a chunk cut inside a fenced example: its docstring is code, the page's prose after the fence is prose
    cut = (
        "        if serializer.is_valid():\n            serializer.save()\n            return JsonResponse(data)\n```\n\n"
        "Note that we need to mark the view as csrf_exempt for our purposes.\n\n"
        '```\n@csrf_exempt\ndef snippet_detail(request, pk):\n    """\n    Retrieve, update or delete a code snippet.\n'
    )
    read = statements(cut, "Tutorial › Writing views")
    assert [statement.text for statement in read] == [
        "Note that we need to mark the view as csrf_exempt for our purposes."
    ]
    assert {statement.entry for statement in read} == {None}


def test_an_epigraph_is_someones_words_not_the_documentation():
    text = (
        "The Browsable API\n\nIt is a profoundly erroneous truism that we should think of what we are doing. "
        "The precise opposite is the case.\n\n— Alfred North Whitehead, An Introduction to Mathematics (1911)\n\n"
        "Django REST Framework supports generating human-friendly HTML output for each resource.\n"
    )
    said = [statement.text for statement in statements(text, "The Browsable API")]
    assert not any("opposite" in text for text in said) and not any("Whitehead" in text for text in said)
    assert any("human-friendly HTML output" in text for text in said)


def test_a_task_heading_or_a_list_of_entries_is_no_context_a_user_names():
    assert context_name("Project management › Translations › Upload new source files") != "Upload new source files"
    assert context_name("Usage › Command-line Flags") == ""
    assert context_name("Quickstart › Response Content") == "Response Content"  # a thing, still


def test_a_heading_that_describes_a_part_of_the_manual_is_no_context_a_user_names():
    # a noun with a phrase after it: the development readings found every question placed in one broken
    assert context_name("Template Designer Documentation › List of Builtin Filters") == ""
    assert context_name("Version CLI Option › First version of --version") != "First version of --version"
    assert context_name("Deploying your docs › Read the Docs") == "Read the Docs"  # a name, kept


def test_a_statement_held_by_a_case_or_a_second_condition_is_not_asked_without_it():
    assert not asked_about("For a more complex example you can provide a hint.", "hint")
    raw = "In the rare case that you'd like to get the raw socket response from the server, you can access r.raw."
    assert not asked_about(raw, "access r.raw")
    both = "If you change the encoding, Requests will use the new value of r.encoding whenever you call r.text."
    assert not asked_about(both, "call r.text") and not asked_about(both, "change the encoding")


def test_one_example_of_a_list_is_not_asked_as_the_task():
    listed = "You can also use primary key and various other relationships, but hyperlinking is good RESTful design."
    assert not asked_about(listed, "primary key")


def test_a_question_asked_under_a_signature_is_known_again_without_it():
    asked = "In .build_relational_field(self, field_name, relation_info), what does the default implementation return?"
    assert without_context(asked) == "What does the default implementation return?"


def test_a_docstring_trees_section_is_named_with_its_module():
    # "In code, ..." names an English word; the section is the module's function
    assert context_name("code › interact") == "code.interact"
    assert context_name("Quickstart › Response Content") == "Response Content"


def test_a_question_put_to_the_reader_is_no_entrys_description():
    text = (
        "include_docs_urls\n\npublic: Default True. Should the schema be considered public? If True schema is "
        "generated without a request instance being passed to views.\n"
    )
    assert not any(
        question.startswith(("What does public", "What is stored in public")) for question in questions(text)
    )


def test_a_heading_with_a_colon_and_an_article_is_no_attribute():
    assert entry_of_line("Regressions: a big problem") is None
    assert entry_of_line("is_link: bool = False class-attribute") is not None


def test_an_object_relative_to_what_came_before_is_no_task():
    assert not asked_about("If you want to set additional configuration you should do so after.", "additional")


def test_a_pronoun_does_not_stand_for_an_option_named_with_its_command():
    asked = "What does the --no-color-moved-ws option of git diff do?"
    assert (
        refer_back(asked, "--no-color-moved-ws", "--no-color-moved-ws") == asked
    )  # not "What does it of git diff do?"
    assert refer_back("What does the celery.signature class represent?", "celery.signature", "celery.signature") == (
        "What does it represent?"
    )


def test_an_object_given_elsewhere_is_no_task():
    assert not asked_about("Add the specified OPTS to the set of command line arguments.", "OPTS")


def test_should_with_a_linking_verb_is_what_to_expect_not_what_to_do():
    text = "The similarity should become even more apparent when we start writing views that use our serializer."
    assert not any("what do I need to do" in question or "what should I do" in question for question in questions(text))


def test_a_contrast_is_no_definition_and_a_narrowed_owner_is_no_owner():
    assert not asked_about("Unlike commiturl, pushurl is a base path.", "what pushurl is")
    assert not asked_about("A topic already in next can get fixes while still in next.", "topic")


def test_what_the_tool_may_do_or_an_addition_to_the_text_before_is_no_users_task():
    assert not asked_about(
        "To save space in small files, object blocks may be omitted if the index is absent.", "space"
    )
    added = "As well as the command line client, developers can also interact with your API using client libraries."
    assert not asked_about(added, "interact with")


def test_a_statement_about_the_previous_section_leans_on_it():
    text = "If you are coming from a CVS background, the style of cooperation suggested in the previous section may be new."
    assert questions(text) == []


def test_an_error_without_its_cause_is_asked_neither_why_nor_what_for():
    text = "RelatedField.get_object(self, queryset)\n\nMay raise an ObjectDoesNotExist exception.\n"
    assert questions(text, "Relations › get_object") == []
    caused = "RelatedField.get_object(self, queryset)\n\nRaises ObjectDoesNotExist if no object matches the lookup.\n"
    assert asked_about(caused, "raise ObjectDoesNotExist", "Relations › get_object")


def test_a_condition_keeps_the_means_it_names():
    text = "When you interact with the API through the web browser, you can log in, and the session provides authentication."
    assert asked_about(text, "interact with the API through the web browser")
