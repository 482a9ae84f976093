"""No engine class grows into a tower: at most 30 methods over its own class chain.

Issue 32 step 1: ``Engine`` was a tower of single-use mixins (89 methods over eight
classes writing one shared state); a reader of one method had eight files of possible
writers for each attribute. Its parts are now objects that own their state. This test
keeps it so: every class defined in ``announcer.engine`` is counted with the methods
of all its bases that are ours (functions, static and class methods, properties;
dunder methods, which ``dataclass`` and ``NamedTuple`` generate, are not counted).
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from typing import Final

import announcer.engine

MAX_METHODS: Final = 30
#: Being reworked elsewhere (issue 32): the speech scheduler (its lead is editing it).
SKIPPED_MODULES: Final = ("announcer.engine.scheduler",)
#: Towers still to be taken apart (issue 32 step 1 names ``Policy``), each held at the
#: count it has now so that it only shrinks; remove it here once it is 30 or fewer.
NOT_YET: Final = {
    "announcer.engine.policy.Policy": 42,
    "announcer.engine.policy_questions.PolicyQuestions": 37,
    "announcer.engine.policy_wording.PolicyWording": 32,
}


def _engine_classes() -> dict[str, type]:
    classes: dict[str, type] = {}
    for module_info in pkgutil.iter_modules(announcer.engine.__path__):
        name = f"announcer.engine.{module_info.name}"
        if name.startswith(SKIPPED_MODULES):
            continue
        module = importlib.import_module(name)
        for value in vars(module).values():
            if inspect.isclass(value) and value.__module__ == name:
                classes[f"{name}.{value.__qualname__}"] = value
    return classes


def _methods(cls: type) -> list[str]:
    """The methods ``cls`` has from itself and every base of ours, by class and name."""
    found: list[str] = []
    for base in cls.__mro__:
        if not base.__module__.startswith("announcer."):
            continue
        for name, value in vars(base).items():
            if name.startswith("__") and name.endswith("__"):
                continue
            if inspect.isfunction(value) or isinstance(
                value, (staticmethod, classmethod, property)
            ):
                found.append(f"{base.__name__}.{name}")
    return found


def test_no_engine_class_has_more_than_30_methods_over_its_class_chain() -> None:
    classes = _engine_classes()
    assert "announcer.engine.pipeline.Engine" in classes  # the walk finds the engine
    too_many = {
        name: len(_methods(cls))
        for name, cls in classes.items()
        if len(_methods(cls)) > NOT_YET.get(name, MAX_METHODS)
    }
    assert not too_many, f"over {MAX_METHODS} methods over the class chain: {too_many}"


def test_the_engine_and_its_parts_are_objects_not_mixins_of_one_state() -> None:
    from announcer.engine.pipeline import Engine

    ours = [base for base in Engine.__mro__ if base.__module__.startswith("announcer.")]
    assert ours == [Engine]
    assert len(_methods(Engine)) <= MAX_METHODS


def test_a_tower_taken_apart_leaves_the_not_yet_list() -> None:
    """A class still listed as not yet taken apart is over the bound (else unlist it)."""
    classes = _engine_classes()
    for name, ceiling in NOT_YET.items():
        assert name in classes, name
        assert MAX_METHODS < len(_methods(classes[name])) <= ceiling, name
