"""Round 17 of the offline questioner, from the development readings of cmd2 (a command-line framework's short
feature pages, the shape of a tutorial): no question on a phrase lifted out of its sentence, and more of what
a tutorial says in its own voice asked as a task ("If you want to X, ... when ...", "X can be done using Y")."""

from __future__ import annotations

from benchsmith.agents.offline.facts import passage_facts
from benchsmith.agents.offline.headings import context_name
from benchsmith.agents.offline.wording import wordings
from benchsmith.entries import entry_of_line, statements


def questions(text: str, title: str = "Guide › Page") -> list[str]:
    return [wording.question for fact in passage_facts(text, title) for wording in wordings(fact)]


def asked_about(text: str, words: str, title: str = "Guide › Page") -> bool:
    return any(words in question for question in questions(text, title))


def test_what_might_have_been_done_is_no_step_of_a_task():
    text = (
        "To further complicate matters, you might have included ANSI escape sequences in the output to generate "
        "colors on the terminal."
    )
    assert not asked_about(text, "complicate matters")
    assert asked_about("To disable colors, you can set allow_style to Never.", "disable colors")  # a step: kept


def test_an_idiom_without_its_phrase_or_an_absence_of_any_is_not_asked():
    cut = "A scripter can take advantage of piecing together workflows using simple app calls."
    assert not any(question.rstrip("?").endswith("take advantage") for question in questions(cut))
    assert not asked_about("Without any work on the part of the designer, scripts run unchanged.", "any work")
    assert asked_about("Without the --force flag, the command refuses to overwrite files.", "--force flag")


def test_a_particle_parted_from_its_verb_is_not_asked_with_it():
    assert not asked_about("As a designer it is preferable to design from the inside to out.", "design out")


def test_a_heading_with_a_remark_in_parentheses_is_no_context():
    assert context_name("Embedded Python Shells › Python (optional)") != "Python (optional)"
    assert context_name("Embedded Python Shells › IPython (optional)") != "IPython (optional)"


def test_an_examples_class_statements_are_no_entries():
    assert entry_of_line("class FirstApp(cmd2.Cmd):") is None
    assert entry_of_line("class BuildStatus:") is None
    assert entry_of_line("class requests.Session") is not None  # Sphinx's entry line: kept
    example = 'class BuildStatus:\n\n    id: int\n\nclass FirstApp(cmd2.Cmd):\n\n    """A simple cmd2 application."""\n'
    read = statements(example, "Scripting › Advanced API")
    assert read and not any("FirstApp" in (statement.entry or "") for statement in read)
    assert not asked_about(example, "FirstApp")


def test_a_wish_with_a_time_in_its_instruction_is_asked_as_the_task():
    text = "If you want to show an error message, put it in self.broken_pipe_warning when you initialize Cmd."
    assert asked_about(text, "show an error message")
    assert not asked_about(text, "initialize Cmd")  # the time is the instruction's, no condition of its own


def test_a_passive_with_a_named_means_is_asked_as_how_to_do_it():
    assert any(
        question in ("How do I disable colors?", "How can I disable colors?")
        or ("disable colors" in question and question.startswith(("How", "What")))
        for question in questions("Colors can be disabled with the --no-color flag.")
    )
    # no code thing named, a quantified subject or a negation: nothing to ask how
    assert questions("Colors can be disabled with some care.") == []
    assert not asked_about("Any command can be aliased with the alias command.", "alias any command")
    assert not asked_about("Colors cannot be disabled with the --no-color flag.", "disable colors")


def test_an_instructions_purpose_after_it_is_asked_as_the_task():
    assert asked_about("Pass the --all flag to show hidden commands.", "show hidden commands")
    assert asked_about("You should call self.poutput() to print colored output.", "print colored output")
    # a light verb, a clause for an object, or "use X to Y" (what X is for, asked by its own reader): not this task
    assert not asked_about("Set strict to True to be in line with the new scoping rules.", "be in line")
    assert not asked_about("Pass the --all flag to avoid when recursing.", "avoid when")
    assert not asked_about("Tell git to recurse into submodules.", "How do I recurse")
    assert not asked_about("Use the --verbose flag to print every request.", "How do I print every request")


def test_a_verb_whose_with_gives_its_arguments_has_no_means_to_ask():
    text = "cmd2.Cmd can be initialized with a stdin and stdout variables, which it stores as self.stdin."
    assert not any(question.startswith(("How do I", "How can I")) for question in questions(text))


def test_a_lower_case_heading_whose_section_says_what_it_is_documents_that_entry():
    title = "Builtin Commands › List of Builtin Commands › shortcuts"
    assert "What does the shortcuts command do?" in questions("This command lists available shortcuts.", title)
    setting = statements("This setting causes cmd2 to show elapsed time. It defaults to False.", "Settings › timing")
    assert [(statement.entry, statement.entry_kind) for statement in setting] == [("timing", "setting")] * 2
    # a heading of words, or a section that does not open by naming its kind: no entry
    assert statements("This command lists available shortcuts.", "Guide › Getting Started")[0].entry is None
    assert statements("It lists available shortcuts.", "Commands › shortcuts")[0].entry is None


def test_you_as_an_object_is_me_in_the_users_words():
    text = "Take a moment to review the initial project that has been created for you."
    assert asked_about(text, "created for me") and not asked_about(text, "for I")


def test_a_present_passive_says_what_sets_a_thing_or_when_it_happens():
    defined = "The prompt for subsequent lines of input is defined by the cmd2.Cmd.continuation_prompt attribute."
    assert "What defines the prompt for subsequent lines of input?" in questions(defined)
    called = "Postparsing hooks are called after the user input has been parsed."
    assert "When are postparsing hooks called?" in questions(called)
    # no thing named, no code thing as the agent, a concession, a modal, or "after" as a name's source: not asked
    assert questions("An exception is raised when the file is missing.") == []
    assert questions("The prompt for the first line is defined by the user.") == []
    assert questions("Finalization hooks are called even if the command raises an exception.") == []
    assert not asked_about("Postparsing hooks may be called after the input has been parsed.", "When")
    assert not asked_about("Releases in the 5.x series are codenamed after a song.", "When")


def test_any_one_of_a_named_kind_is_a_condition_to_ask():
    text = "If any postcommand hook raises an exception, no further postcommand hook methods will be called."
    assert asked_about(text, "What happens if any postcommand hook raises an exception?")
    assert not asked_about("If any raises an exception, nothing more is called.", "What happens if")


def test_a_thing_weighed_against_others_is_not_defined_by_it():
    assert questions("Hooks are a much better approach.") == []
    assert not asked_about("The quickstart guide is the fastest way to get up and running.", "quickstart guide")
    # "pytest" tagged as a superlative: a plugin's definition still
    assert asked_about("Library pytest-spec is a pytest plugin to display test execution output.", "pytest-spec")


def test_the_next_sections_name_kept_as_a_line_starts_its_entry():
    text = (
        "quit\n\nThis command exits the cmd2 application.\n\n"
        "run_pyscript\n\nThis command runs a Python script file inside the cmd2 application."
    )
    read = statements(text, "Builtin Commands › List of Builtin Commands › quit")
    assert [(statement.entry, statement.role) for statement in read] == [("quit", "first"), ("run_pyscript", "first")]
    quit_facts = [fact for fact in passage_facts(text, "Builtin Commands › quit") if fact.entry == "quit"]
    assert quit_facts and all(fact.answer == (0,) for fact in quit_facts)


def test_what_a_thing_does_to_an_object_is_not_asked_without_the_rest_of_it():
    assert not asked_about(
        "The cmd2.Cmd object sets an exit_code attribute to zero when it is instantiated.", "What does"
    )
    assert not asked_about("Sphinx magically handles the intra-file hierarchy on its own.", "What does Sphinx handle")
    assert asked_about("The ipy command enters an interactive IPython session.", "What does the ipy command enter?")
    # an object with where it goes is still what the thing does ("fits constituents to twelve months of readings")
    assert asked_about("The tide predictor fits harmonic constituents to twelve months of readings.", "What does")


def test_a_sentence_that_grants_a_point_made_before_it_is_not_asked():
    assert questions("You may be right, but Session.mount() raises a ValueError if the prefix is empty.") == []
    assert asked_about("Session.mount() raises a ValueError if the prefix is empty.", "ValueError")


def test_a_verb_on_a_thing_in_title_case_is_a_task_not_a_context():
    assert context_name("Disabling Commands › Hide A Command") != "Hide A Command"
    assert context_name("Deploying your docs › Read the Docs") == "Read the Docs"  # a name with a definite object
