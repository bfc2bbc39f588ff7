"""The overlap retry policy (tools/benchmark/overlap_retry.py) on scripted drafts: corrective turns, re-plans
for overlap and for form, and which draft is kept."""

from benchsmith.tools.benchmark.overlap_retry import RetryLimits, ask_with_corrections, ask_with_replans


def test_corrections_stop_at_the_first_draft_within_the_limit_and_see_the_rejected_ones():
    overlaps = iter([0.9, 0.85, 0.5, 0.1])
    seen: list[list[float]] = []

    def ask(rejected: list[tuple[float, str]]) -> str:
        seen.append([overlap for overlap, _ in rejected])
        return f"draft {len(rejected)}"

    drafts = ask_with_corrections(ask, lambda draft: next(overlaps), max_overlap=0.6, attempts=5)
    assert drafts == [(0.9, "draft 0"), (0.85, "draft 1"), (0.5, "draft 2")]
    assert seen == [[], [0.9], [0.9, 0.85]]  # each corrective turn sees every draft rejected before it


def test_corrections_stop_after_the_allowed_attempts():
    drafts = ask_with_corrections(lambda rejected: "same", lambda draft: 0.9, max_overlap=0.6, attempts=2)
    assert [overlap for overlap, _ in drafts] == [0.9, 0.9, 0.9]  # the first draft and two corrections


def test_a_question_within_the_limit_is_kept_without_replans():
    kept = ask_with_replans(
        "gold-a",
        lambda plan: [(False, 0.3, f"{plan}?")],
        lambda tried: "gold-b",
        RetryLimits(max_overlap=0.6, replans=2, form_replans=3),
    )
    assert (kept.draft, kept.plan, kept.overlap) == ("gold-a?", "gold-a", 0.3)
    assert (kept.corrections, kept.overlap_replans, kept.form_replans) == (0, 0, 0)


def test_overlap_above_the_limit_replans_then_keeps_the_lowest_overlap_flagged():
    scripted = {"a": [(False, 0.9, "a1"), (False, 0.8, "a2")], "b": [(False, 0.7, "b1")], "c": [(False, 0.75, "c1")]}
    tried_seen: list[list[str]] = []

    def replan(tried: list[str]) -> str | None:
        tried_seen.append(list(tried))
        return {1: "b", 2: "c"}.get(len(tried))

    kept = ask_with_replans("a", lambda plan: scripted[plan], replan, RetryLimits(0.6, replans=2, form_replans=5))
    assert (kept.draft, kept.plan, kept.overlap) == ("b1", "b", 0.7)  # all above 0.6: the lowest one
    assert (kept.corrections, kept.overlap_replans, kept.form_replans) == (1, 2, 0)
    assert tried_seen == [["a"], ["a", "b"]]  # three plans tried: the first and two re-plans


def test_an_ill_formed_question_replans_beyond_the_overlap_replans_up_to_the_form_limit():
    plans = ["a", "b", "c", "d", "e"]
    kept = ask_with_replans(
        "a",
        lambda plan: [(True, 0.2, f"{plan}1")],
        lambda tried: plans[len(tried)],
        RetryLimits(0.6, replans=1, form_replans=3),
    )
    assert (kept.form_replans, kept.overlap_replans) == (3, 0)  # a, then b, c, d: stopped at the form limit
    assert (kept.draft, kept.plan) == ("a1", "a")  # all ill-formed at one overlap: the earliest


def test_a_well_formed_question_is_kept_over_a_lower_overlap_ill_formed_one():
    scripted = {"a": [(True, 0.1, "a1")], "b": [(False, 0.7, "b1")]}
    kept = ask_with_replans(
        "a",
        lambda plan: scripted[plan],
        lambda tried: "b" if len(tried) == 1 else None,
        RetryLimits(0.6, replans=1, form_replans=0),
    )
    assert (kept.draft, kept.overlap, kept.form_replans, kept.overlap_replans) == ("b1", 0.7, 1, 0)


def test_no_plan_left_stops_the_retries():
    kept = ask_with_replans(
        "a", lambda plan: [(False, 0.9, "a1")], lambda tried: None, RetryLimits(0.6, replans=5, form_replans=5)
    )
    assert (kept.draft, kept.overlap_replans, kept.form_replans) == ("a1", 0, 0)
