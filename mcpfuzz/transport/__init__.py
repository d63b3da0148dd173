"""Transports: move exact bytes to a server and lines back."""
