"""The engine: sessions, phases and the event stream. It prints nothing."""
