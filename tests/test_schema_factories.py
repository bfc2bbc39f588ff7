"""The output schemas agents build for a call's size are one class per size, under concurrent calls too: a reply
validated as one class must be an instance of the class the seam checks against (the audit judges in threads)."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from benchsmith.agents.judges import ChoiceJudge, choice_schema
from benchsmith.agents.schemas import one_class_per_size


def test_threads_that_ask_for_one_size_together_get_one_class():
    built: list[int] = []
    all_waiting = threading.Barrier(8)

    @one_class_per_size
    def schema(size: int) -> type:
        built.append(size)
        time.sleep(0.01)  # widens the window in which another thread would miss too (as lru_cache lets it)
        return type(f"Schema{size}", (), {})

    def ask(size: int) -> type:
        all_waiting.wait()  # every thread asks at once, none has the class yet
        return schema(size)

    with ThreadPoolExecutor(max_workers=8) as pool:
        classes = list(pool.map(ask, [3] * 8))
    assert len(classes) == 8 and len(set(classes)) == 1
    assert built == [3]  # built once: a second class would fail the seam's isinstance check
    assert schema(4) is not schema(3) and schema(4) is schema(4)


def test_a_choice_judges_baseline_answers_in_the_class_its_schema_names():
    for size in range(1, 50):  # more sizes than the lru_cache it replaces kept
        judge = ChoiceJudge(size)
        choice = judge.baseline(history=[], question="density of zorbium", documents=["Zorbium density: 17."] * size)
        assert isinstance(choice, judge.schema) and judge.schema is choice_schema(size)


def test_a_sized_schema_is_its_typed_base_under_the_bases_name_with_the_sizes_bounds():
    from pydantic import ValidationError

    from benchsmith.agents.condition_judge import ConditionCount, condition_count_schema
    from benchsmith.agents.condition_queries import MultiConditionQueries, queries_schema
    from benchsmith.agents.judges import DocumentChoice
    from benchsmith.agents.nuggets import Nuggets, nugget_schema
    from benchsmith.agents.paraphraser import Paraphrases, RestoredTurns, paraphrase_schema, restored_schema

    pairs = [
        (choice_schema, DocumentChoice),
        (paraphrase_schema, Paraphrases),
        (restored_schema, RestoredTurns),
        (nugget_schema, Nuggets),
        (condition_count_schema, ConditionCount),
        (queries_schema, MultiConditionQueries),
    ]
    for factory, base in pairs:
        made = factory(3)
        assert made is not base and issubclass(made, base) and made.__name__ == base.__name__
        # what a model is shown: the base's fields, in its order, bounded for the size
        assert list(made.model_json_schema()["properties"]) == list(base.model_fields)
    assert choice_schema(3)(rationale="r", choice=3).choice == 3
    with pytest.raises(ValidationError):
        choice_schema(3)(rationale="r", choice=4)  # the size's bound, which the base does not have
    with pytest.raises(ValidationError):
        paraphrase_schema(2)(paraphrases=["one"])
