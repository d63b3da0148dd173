"""String formats: strategies that draw valid values, and the checks that prove them valid."""

from __future__ import annotations

import re
import uuid
from datetime import date

from hypothesis import strategies as st
from jsonschema import FormatChecker

# RFC 3339 section 5.6 (the `date-time`, `date`, `time` formats of JSON Schema 2020-12).
_DATE = r"\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])"
_TIME = r"([01]\d|2[0-3]):[0-5]\d:([0-5]\d|60)(\.\d+)?([Zz]|[+-]([01]\d|2[0-3]):[0-5]\d)"
DATE_TIME = re.compile(rf"{_DATE}[Tt]{_TIME}")
TIME = re.compile(_TIME)
# RFC 3339 appendix A (ISO 8601 durations): P1Y2M3DT4H5M6S, PT0.5S, P3W.
DURATION = re.compile(r"P(?!$)(\d+Y)?(\d+M)?(\d+D)?(T(?=\d)(\d+H)?(\d+M)?(\d+(\.\d+)?S)?)?|P\d+W")
# RFC 3986: a scheme, then characters a URI may hold (no spaces, no controls).
URI = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=%]*")
URI_REFERENCE = re.compile(r"[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=%]*")
HOSTNAME_LABEL = re.compile(r"[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?")


def _uuids() -> st.SearchStrategy[str]:
    return st.uuids().map(str)


def _durations() -> st.SearchStrategy[str]:
    small = st.integers(0, 999)
    date_part = st.tuples(small, small, small).map(lambda p: f"{p[0]}Y{p[1]}M{p[2]}D")
    time_part = st.tuples(st.integers(0, 23), st.integers(0, 59), st.integers(0, 59)).map(
        lambda p: f"T{p[0]}H{p[1]}M{p[2]}S")
    return st.one_of(
        st.tuples(date_part, time_part).map(lambda p: "P" + p[0] + p[1]),
        date_part.map(lambda d: "P" + d),
        time_part.map(lambda t: "P" + t),
        st.integers(1, 52).map(lambda w: f"P{w}W"),
    )


_PATH_SEGMENT = st.text("abcdefghijklmnopqrstuvwxyz0123456789-._~", min_size=1, max_size=12)
_HOST = st.lists(st.from_regex(r"[a-z][a-z0-9]{0,10}", fullmatch=True), min_size=1, max_size=3).map(
    lambda labels: ".".join(labels) + ".example")


def _uris() -> st.SearchStrategy[str]:
    paths = st.lists(_PATH_SEGMENT, max_size=4).map(lambda parts: "/" + "/".join(parts))
    return st.one_of(
        st.tuples(st.sampled_from(["https", "http", "file", "urn"]), _HOST, paths).map(
            lambda p: f"{p[0]}://{p[1]}{p[2]}" if p[0] != "urn" else f"urn:{p[1]}"),
        st.tuples(_HOST, paths, _PATH_SEGMENT).map(lambda p: f"https://{p[0]}{p[1]}?q={p[2]}"),
    )


def _uri_references() -> st.SearchStrategy[str]:
    relative = st.lists(_PATH_SEGMENT, min_size=1, max_size=4).map("/".join)
    return st.one_of(_uris(), relative, relative.map(lambda p: "/" + p), _PATH_SEGMENT.map(lambda s: "#" + s))


# Formats hypothesis-jsonschema does not draw correctly (it ignores `uuid` and `duration`, and
# draws only https URLs for URI references).
CUSTOM_FORMATS: dict[str, st.SearchStrategy[str]] = {
    "uuid": _uuids(),
    "duration": _durations(),
    "uri": _uris(),
    "uri-reference": _uri_references(),
    "iri": _uris(),
    "iri-reference": _uri_references(),
}


def _is_date(value: object) -> bool:
    if not isinstance(value, str):
        return True
    if not re.fullmatch(_DATE, value):
        return False
    try:
        date.fromisoformat(value)
    except ValueError:
        return False
    return True


def _fullmatch(pattern: re.Pattern[str]):
    def check(value: object) -> bool:
        return not isinstance(value, str) or pattern.fullmatch(value) is not None

    return check


def _is_uuid(value: object) -> bool:
    if not isinstance(value, str):
        return True
    if len(value) != 36 or any(value[i] != "-" for i in (8, 13, 18, 23)):
        return False
    try:
        uuid.UUID(value)
    except ValueError:
        return False
    return True


def _is_date_time(value: object) -> bool:
    if not isinstance(value, str):
        return True
    return DATE_TIME.fullmatch(value) is not None and _is_date(value[:10])


def _is_hostname(value: object) -> bool:
    if not isinstance(value, str):
        return True
    labels = value.rstrip(".").split(".")
    return 0 < len(value) <= 253 and all(HOSTNAME_LABEL.fullmatch(label) for label in labels)


def format_checker() -> FormatChecker:
    """jsonschema's checks plus strict ones for the formats it leaves unchecked without extra packages."""
    checker = FormatChecker()
    extra = {
        "uuid": _is_uuid,
        "date": _is_date,
        "date-time": _is_date_time,
        "time": _fullmatch(TIME),
        "duration": _fullmatch(DURATION),
        "uri": _fullmatch(URI),
        "iri": _fullmatch(URI),
        "uri-reference": _fullmatch(URI_REFERENCE),
        "iri-reference": _fullmatch(URI_REFERENCE),
        "hostname": _is_hostname,
    }
    for name, check in extra.items():
        checker.checks(name)(check)
    return checker
