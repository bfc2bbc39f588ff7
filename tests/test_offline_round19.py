"""Round 19 of the offline questioner, from the development trees' tutorial sections: a section whose heading
names a task is asked as that task, answered by its first statement that tells how with a tool; a passive's
means said as what the user does ("by setting the X argument") is a procedure's means like "using X"."""

from __future__ import annotations

from benchsmith.agents.offline.facts import passage_facts
from benchsmith.agents.offline.facts.tasks import heading_task
from benchsmith.agents.offline.wording import wordings


def asked(text: str, title: str) -> list[str]:
    return [w.question for fact in passage_facts(text, title) for w in wordings(fact)]


def test_a_task_heading_is_asked_and_answered_by_the_statement_that_tells_how():
    title = "Using Widgets › Destroying widgets"
    text = (
        "Destroying widgets\n\nWidgets can be destroyed (removed) from an application by using the destroy "
        "method.\n\nOnce a widget has been destroyed it cannot be used or referenced again."
    )
    facts = [fact for fact in passage_facts(text, title) if fact.kind == "procedure"]
    assert [fact.slot("vp") for fact in facts] == ["destroy widgets"]
    assert "How do I destroy widgets?" in [w.question for w in wordings(facts[0])]
    assert facts[0].answer == (1,)  # the statement with the means, not the heading nor the warning after it


def test_a_task_heading_whose_section_does_not_tell_how_is_not_asked():
    # the section goes on about something else: no statement names the task's verb and thing with a tool
    title = "Recipes › Push a button"
    text = "Push a button\n\nUse a PushButton to display a message when the button is pressed."
    assert not any("push a button" in question.lower() for question in asked(text, title))
    # nor when the statement that names the task names no tool to do it with
    title = "Transcripts › Creating transcripts"
    text = "Creating transcripts\n\nCreating transcripts is by far the easiest way to test an application."
    assert not any("create transcripts" in question.lower() for question in asked(text, title))
    # nor when it says that you can, not how
    title = "Custom Routers › Customizing dynamic routes"
    text = "Customizing dynamic routes\n\nYou can also customize how the @action decorator is routed."
    assert not any("customize dynamic routes" in question.lower() for question in asked(text, title))
    # nor when the task is its condition: what to do after, not how
    title = "Advanced renderer usage › Underspecifying the media type"
    text = (
        "Underspecifying the media type\n\nIf you underspecify the media type, you should make sure to specify "
        "it explicitly when you return the response, using the content_type attribute."
    )
    assert not any("underspecify the media type" in question.lower() for question in asked(text, title))


def test_the_task_of_a_heading_is_a_verb_and_its_object_in_a_users_words():
    body = "If you underspecify the renderer's media type, the SchemaView class renders it."
    assert heading_task("Underspecifying the media type", body) == ("underspecify the media type", "the media type")
    assert heading_task("Rendering Forms", "Serializers may be rendered as forms.") == ("render forms", "forms")
    # a name keeps its capitals where the body writes them so
    assert heading_task("Generating a dynamic schema with SchemaView", "You can route a SchemaView.") == (
        "generate a dynamic schema with SchemaView",
        "a dynamic schema with SchemaView",
    )
    for heading in (
        "Getting Started",  # reading the manual, not using the tool
        "Opening and closing windows",  # two tasks
        "Change your apps appearance",  # the reader's own thing
        "Commands",  # a thing, not a task
        "Invoking With Arguments",  # no object
    ):
        assert heading_task(heading, "") is None, heading


def test_a_passives_means_said_as_what_the_user_does_makes_a_procedure():
    text = "The trailing slashes on the URL routes can be removed by setting the trailing_slash argument to False."
    facts = [fact for fact in passage_facts(text, "Routers") if fact.kind == "procedure"]
    assert [fact.slot("vp") for fact in facts] == ["remove the trailing slashes"]  # where: the heading's context
    # "by" with a noun is the passive's agent, no means: what specifies it is asked, not how to
    agent = "The prompt is specified by the cmd2.Cmd.prompt attribute."
    assert not [fact for fact in passage_facts(agent, "Prompt") if fact.kind == "procedure"]
    # a means that names no code thing is not one the reply can point to
    vague = "The trailing slashes on the URL routes can be removed by setting an argument."
    assert not [fact for fact in passage_facts(vague, "Routers") if fact.kind == "procedure"]
    # nor is a definite thing that nothing narrows: which renderer's behavior?
    bare = "The renderer behavior can be modified by setting a custom encoder_class attribute."
    assert not [fact for fact in passage_facts(bare, "Renderers") if fact.kind == "procedure"]


def test_a_passives_thing_is_its_noun_whole_without_the_adverb_hung_on_it():
    text = "Optionally fragments can be stripped from the URL by setting allow_fragments to False."
    assert [fact.slot("vp") for fact in passage_facts(text, "URLs") if fact.kind == "procedure"] == [
        "strip fragments from the URL"
    ]
    # one of two things joined is half the thing: not asked
    joined = "Custom headers and authentication may be used with CoreAPIClient in a similar way."
    assert not [fact for fact in passage_facts(joined, "Testing") if fact.kind == "procedure"]


def test_a_verb_the_tagger_does_not_know_keeps_its_own_base_form():
    text = "Tests can individually be deselected during collection by passing the --deselect=item option."
    vps = [fact.slot("vp") for fact in passage_facts(text, "Collection") if fact.kind == "procedure"]
    assert vps and all(vp.startswith("deselect ") for vp in vps)


def test_a_behavior_no_name_narrows_is_no_thing_a_user_names():
    vague = "By creating your own base ViewSet classes, you can provide common behavior."
    assert not [fact for fact in passage_facts(vague, "ViewSets") if fact.kind in ("procedure", "capability")]
    named = "You can customize the ListSerializer behavior by overriding the create() method."
    assert any(
        "ListSerializer behavior" in fact.slot("vp")
        for fact in passage_facts(named, "Serializers")
        if fact.kind in ("procedure", "capability")
    )
