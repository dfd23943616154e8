"""The Examples sections of the estimators' and the experiments' docstrings run as written."""

from __future__ import annotations

import doctest

import pytest

from explorer import FGM, FSA, FSManifold, FSMulti, GrFL, experiments

DOCUMENTED = [FGM, FSA, GrFL, FSMulti, FSManifold, experiments.sweep, experiments.compare,
              experiments.one_standard_error, experiments.stability, experiments.agreement]


@pytest.mark.parametrize("obj", DOCUMENTED, ids=lambda o: o.__qualname__)
def test_examples_run_as_written(obj):
    assert "Examples\n" in (obj.__doc__ or ""), f"{obj.__qualname__} has no Examples section"
    finder = doctest.DocTestFinder(recurse=False)
    tests = [t for t in finder.find(obj, obj.__qualname__, globs={}) if t.examples]
    assert tests, f"{obj.__qualname__}'s Examples hold no example"
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    report = []
    for test in tests:
        runner.run(test, out=report.append)
    assert runner.failures == 0, "".join(report)
