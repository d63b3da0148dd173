"""Reporters: handlers of the engine's event stream (console, JSON)."""
