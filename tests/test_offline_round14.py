"""What the offline questioner no longer asks after the development readings of round 13 (drf, git, mkdocs,
pytest): a capability whose statement says how it is done, an occasion for an entry described by what it
returns, an overview of a heading that names a task or of a first sentence about something narrower, the
author's own voice, and an unanswerable question about a name the remaining corpus still names."""

from __future__ import annotations

from benchsmith.agents.offline.asking import self_contained
from benchsmith.agents.offline.facts import passage_facts
from benchsmith.agents.offline.headings import context_name
from benchsmith.agents.offline.namesakes import shared_name
from benchsmith.agents.offline.wording import wordings
from benchsmith.agents.text import PassageStatistics
from benchsmith.agents.turn_types import TypedQuestioner, checkable_absence, named_elsewhere


def questions(text: str, title: str = "Guide › Page") -> list[str]:
    return [wording.question for fact in passage_facts(text, title) for wording in wordings(fact)]


def test_a_capability_held_in_a_role_or_a_moment_the_question_leaves_out_is_not_asked_can_i():
    # the reply's content is how or as what: "Is it possible to include expiry_date?" lifts the clause
    assert not any("expiry_date" in q for q in questions("You can include expiry_date as a field option on a form."))
    when = "You can include the authentication scheme when instantiating a new client."
    assert not any("authentication scheme" in q for q in questions(when))
    # the whole statement asked, or a means the yes answers with: the capability stays
    assert "Can I stream large responses?" in questions("You can stream large responses.")
    assert "Can I stream large downloads?" in questions("You can stream large downloads with the stream argument.")


def test_an_entry_described_by_what_it_returns_is_not_asked_when_or_why_to_call_it():
    text = (
        "get_path_fields(self, path, method)\n\nReturn a list of coreapi.Field() instances, one for each parameter.\n"
    )
    asked = questions(text, "Schemas › AutoSchema")
    assert "What does get_path_fields return?" in asked
    assert not any(q.startswith(("When would I use", "Why would I call", "What problem does")) for q in asked)
    added = (
        "get_manual_fields(self, path, method)\n\nReturn a list of coreapi.Field() instances to be added to fields.\n"
    )
    assert not any(q.startswith(("When would I use", "Why would I call")) for q in questions(added, "Schemas › API"))
    misread = "pytest_assertrepr_compare(config, op, left, right)\n\nReturn explanation for comparisons in failing assert expressions.\n"
    assert not any(q.startswith(("When would I use", "Why would I call")) for q in questions(misread, "API › Hooks"))
    value = "VersionPredicate.satisfied_by(version)\n\nTrue if version is compatible with all the predicates in self.\n"
    assert not any(q.startswith(("When would I use", "Why would I call")) for q in questions(value, "API › versions"))
    should = "get_schema_fields(self, view)\n\nThe method should return a list of coreapi.Field instances.\n"
    assert not any(q.startswith(("When would I use", "Why would I call")) for q in questions(should, "Filters › API"))


def test_a_description_in_the_entrys_own_name_says_what_it_does_not_when_to_use_it():
    text = "copy_static_files(files)\n\nCopy static files from source to destination.\n"
    asked = questions(text, "Utilities › copy_static_files")
    assert "What is copy_static_files for?" in asked
    assert not any(q.startswith(("When would I use", "Why would I call", "What problem does")) for q in asked)
    flag = "is_static_page(path)\n\nReturn True if file is a static page (HTML, XML, JSON).\n"
    assert not any(q.startswith(("When would I use", "Why would I call")) for q in questions(flag, "Utilities › API"))


def test_the_advised_action_is_the_infinitive_not_a_verb_of_the_clause_before_it():
    text = (
        "If you're not sure exactly what behavior a ModelSerializer class will generate it is usually a good idea "
        "to run manage.py shell, and print an instance of the serializer."
    )
    asked = questions(text)
    assert "How should I run manage.py shell?" in asked
    assert not any("behavior generate" in q for q in asked)


def test_a_heading_that_names_a_task_is_no_thing_to_explain():
    text = (
        "Download translations\n\nWhen a translator has finished translating their work needs to be downloaded "
        "from Transifex into the repository. Run the script to fetch them."
    )
    assert not any("download translations" in q.lower() for q in questions(text, "Project › Download translations"))


def test_a_first_sentence_about_something_narrower_than_the_heading_gives_no_overview():
    narrower = (
        "Binary search\n\nBinary search within a block is supported by the restart_offset fields at the end of the "
        "block. Readers can search through the restart table to locate the sought key."
    )
    assert not any("binary search" in q.lower() for q in questions(narrower, "reftable › Binary search"))
    embedded = (
        "Optional fields\n\nBy default validation enforces that all fields be required=True. In some cases you "
        "might want to apply required=False to one of the fields."
    )
    assert not any("optional fields" in q.lower() for q in questions(embedded, "Validators › Optional fields"))
    about = (
        "Session Objects\n\nThe Session object allows you to persist certain parameters across requests. "
        "It also persists cookies across all requests made from the Session instance."
    )
    assert "Can you give me an overview of Session objects?" in questions(about, "Advanced › Session Objects")


def test_a_first_sentence_about_one_of_the_kind_or_without_the_headings_words_gives_no_overview():
    one = "Object types\n\nType 5 is reserved for future expansion. Type 0 is invalid.\n"
    assert not any("object types" in q for q in questions(one, "Pack format › Object types"))


def test_one_sentence_is_no_overview():
    text = "Object types\n\nObject types are the kinds of objects a repository stores.\n"
    asked = questions(text, "Format › Object types")
    assert "Can you explain object types?" in asked
    assert not any("overview" in q for q in asked)


def test_the_author_speaking_in_the_first_person_is_no_fact():
    text = (
        "Platinum sponsors\n\nOur platinum sponsors have each made a substantial contribution to the development "
        "of the framework, and I simply can't thank them enough. Their support keeps the project going."
    )
    assert questions(text, "Funding › Platinum sponsors") == []


def test_an_unanswerable_question_is_not_about_a_name_the_remaining_corpus_names():
    held_out = {
        "text": "get_link(self, path, method, base_url)\n\nReturns a coreapi.Link instance for the endpoint.\n",
        "title": "Schemas › get_link",
    }
    elsewhere = "Per-view customisation: get_link returns the view's Link, built from its path and method."
    statistics = PassageStatistics([held_out["text"], elsewhere, "Unrelated text about throttles."])
    assert named_elsewhere("get_link", statistics, held_out=1)
    assert not named_elsewhere("get_link", statistics, held_out=2)
    asked = TypedQuestioner().baseline(kind="unanswerable", passages=[held_out], history=[], corpus_stats=statistics)
    assert "get_link" not in asked.question
    alone = PassageStatistics([held_out["text"], "Unrelated text about throttles."])
    kept = TypedQuestioner().baseline(kind="unanswerable", passages=[held_out], history=[], corpus_stats=alone)
    assert "get_link" in kept.question


def test_a_signature_heading_is_named_by_its_name():
    title = "API Guide › Testing › .force_authenticate(user=None, token=None)"
    assert context_name(title) == "force_authenticate"
    asked = self_contained("What's the best way to unauthenticate subsequent requests?", title)
    assert asked == "In force_authenticate, what's the best way to unauthenticate subsequent requests?"


def test_a_thing_defined_as_part_of_the_plain_noun_the_page_is_about_is_not_defined():
    assert questions("Dj-rest-auth is a newer fork of the project.") == []
    assert "What is APIException?" in questions("APIException is a subclass of the Exception class.")


def test_the_authors_own_thing_as_the_subject_is_no_fact_a_user_asks_about():
    text = "Gold sponsors\n\nOur gold sponsors include companies large and small. Many thanks for their funding.\n"
    assert questions(text, "Kickstarter › Sponsors › Gold sponsors") == []
    assert questions("Our serializer class can validate the incoming data.") == []


def test_an_adverb_that_points_back_leans_on_what_came_before():
    text = (
        "prev_next_buttons_location: One of bottom, top, both, or none. Displays the Next and Previous buttons "
        "accordingly. Default: bottom.\n\nnavigation_depth: The maximum depth of the navigation tree. Default: 4.\n"
    )
    assert not any("prev_next_buttons_location" in q for q in questions(text, "Choosing your Theme › readthedocs"))


def test_an_entry_described_by_what_it_returns_is_still_asked_an_explanation():
    text = (
        "get_path_fields(self, path, method)\n\nReturn a list of coreapi.Field() instances, one for each parameter.\n"
    )
    assert "Can you explain get_path_fields?" in questions(text, "Schemas › AutoSchema")


def test_an_entry_whose_description_is_what_an_override_must_return_is_asked_what_it_returns():
    text = "get_schema_fields(self, view)\n\nThe method should return a list of coreapi.Field instances.\n"
    asked = questions(text, "Filters › API")
    assert "What does get_schema_fields return?" in asked
    assert not any(q.startswith(("What is the purpose of", "What does get_schema_fields do")) for q in asked)


def test_what_may_happen_to_you_is_no_remedy_and_passive_advice_is_one():
    likely = "If you’ve already contributed to Git, you may also be CC’d in another contributor’s patch series."
    assert not any("what do I need to do" in q or "What should I do" in q for q in questions(likely))
    advised = "If a patch is long, you are encouraged to delete parts of it that are unrelated to your review."
    asked = questions(advised)
    assert "What should I do if a patch is long?" in asked
    assert "What happens if a patch is long?" not in asked


def test_a_negated_judgement_gives_no_recommended_way():
    text = "It is not strictly necessary to package a theme, as the entire theme can be contained in the custom_dir."
    assert not any("package a theme" in q for q in questions(text))


def test_an_option_line_with_a_value_of_alternatives_opens_its_own_entry():
    text = (
        "-v\n\n--verbose\n\nPass --verbose to git-fetch and git-merge.\n\n"
        "--[no-]recurse-submodules[=yes|on-demand|no]\n\n"
        "This option controls if new commits of populated submodules should be fetched.\n"
    )
    facts = passage_facts(text, "git-pull(1) Manual Page › OPTIONS")
    verbose = next(fact for fact in facts if fact.entry == "--verbose")
    assert len(verbose.answer) == 1  # its own sentence only, not the next option's
    assert any(fact.entry == "--recurse-submodules" for fact in facts)


def test_an_entrys_unread_first_sentence_leaves_no_detail_to_stand_for_it():
    text = (
        "--exclude=<glob-pattern>\n\nDo not include refs matching <glob-pattern> that the next --all, --branches, "
        "--tags, --remotes, or --glob would otherwise consider. Repetitions of this option accumulate patterns.\n"
    )
    assert not any(
        question.startswith(("When should I use", "What does the --exclude option"))
        for question in questions(text, "git-log(1) Manual Page › OPTIONS › Commit Limiting")
    )


def test_reading_a_part_of_the_manual_is_no_capability():
    assert questions("You can consult funcarg comparison section in the docs for more information.") == []


def test_instead_without_what_it_replaces_leans_on_what_came_before():
    text = "Use the pytest_warning_recorded hook instead, which replaces the item parameter by a nodeid parameter."
    assert questions(text) == []


def test_a_use_with_another_name_is_not_the_first_names_purpose():
    text = "Use pytest.raises() with the pytest.mark.parametrize decorator to write tests in which some tests raise."
    assert not any("pytest.raises()" in q for q in questions(text))
    assert "What is json.loads for?" in questions("Use json.loads to read a document.")


def test_an_entry_described_by_its_optional_arguments_has_no_purpose_there():
    text = (
        "pytest.mark.xfail(condition, reason)\n\nOptionally specify a reason for better reporting and run=False if "
        "you don't even want to execute the test function.\n"
    )
    assert not any(
        q.startswith(("What is pytest.mark.xfail", "What does pytest.mark.xfail do")) for q in questions(text)
    )


def test_two_entries_described_alike_are_one_meaning_not_two():
    def meanings(*passages: tuple[str, str]) -> bool:
        return shared_name([{"title": title, "text": text} for title, text in passages]) is not None

    inherited = (
        ("API › Session", "pytest.Session.config: Config\n\nThe pytest config object."),
        ("API › Collector", "pytest.Collector.config: Config\n\nThe pytest config object."),
    )
    assert not meanings(*inherited)
    assert meanings(
        ("lzma › decompress", "lzma.decompress(data)\n\nDecompress a block of LZMA data."),
        ("bz2 › decompress", "bz2.decompress(data)\n\nDecompress a block of bz2 data."),
    )


def test_only_a_code_name_is_held_named_elsewhere():
    statistics = PassageStatistics(["Gold sponsors fund the project.", "Sponsors of gold level are thanked."])
    assert not named_elsewhere("gold sponsors", statistics, held_out=1)
    # a flag or a CamelCase name is a code name too: counted where other pages name it
    pages = PassageStatistics(["The GitHub organization hosts the code.", "Join the GitHub organization to help."])
    assert named_elsewhere("the GitHub organization", pages, held_out=1)
    assert named_elsewhere("--verbose", PassageStatistics(["--verbose\n\nMore output.", "Pass --verbose."]), 1)


def test_an_unanswerable_question_names_a_code_name():
    held_out = {
        "text": "Template inheritance makes it possible to keep certain elements on each page, like the header "
        "and the footer. The set_layout() hook picks the base template of a page.",
        "title": "Templates › Inheritance",
    }
    statistics = PassageStatistics([held_out["text"], "Unrelated text about routing requests."])
    assert not checkable_absence("certain elements", statistics, held_out=1)
    assert checkable_absence("set_layout()", statistics, held_out=1)
    asked = TypedQuestioner().baseline(kind="unanswerable", passages=[held_out], history=[], corpus_stats=statistics)
    assert "set_layout()" in asked.question
    prose = {"text": held_out["text"].split(" The ")[0] + ".", "title": held_out["title"]}
    page = TypedQuestioner().baseline(kind="unanswerable", passages=[prose], history=[], corpus_stats=statistics)
    assert page.question_type == "summary"  # no fact to hold out: the label judge re-plans the turn
