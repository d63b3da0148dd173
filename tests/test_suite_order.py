"""The order modules are handed to pytest-xdist's workers in: the costliest tier first, a module's tests together."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from tests.conftest import costliest_modules_first

pytestmark = pytest.mark.unit


@dataclass
class Mark:
    name: str


@dataclass
class Collected:
    """What the ordering reads of a collected test: its node id and its markers."""

    nodeid: str
    tier: str

    def iter_markers(self) -> list[Mark]:
        return [Mark("parametrize"), Mark(self.tier)]


def test_slow_modules_go_first_then_process_then_unit_each_by_its_number_of_tests() -> None:
    items = [Collected("tests/test_a.py::one", "unit"), Collected("tests/test_b.py::one", "process"),
             Collected("tests/test_c.py::one", "process"), Collected("tests/test_c.py::two", "process"),
             Collected("tests/test_d.py::quick", "process"), Collected("tests/test_d.py::long", "slow"),
             Collected("tests/test_a.py::two", "unit")]
    ordered = [item.nodeid for item in costliest_modules_first(items)]  # type: ignore[arg-type]
    assert ordered == ["tests/test_d.py::quick", "tests/test_d.py::long",  # one slow test makes the module slow
                       "tests/test_c.py::one", "tests/test_c.py::two", "tests/test_b.py::one",
                       "tests/test_a.py::one", "tests/test_a.py::two"]
