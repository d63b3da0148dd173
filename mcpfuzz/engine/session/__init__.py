"""The session with one server under test: process lifecycle, windows, barriers, id routing."""
