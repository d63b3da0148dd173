"""Authentication that lasts a run: tokens from a command or from OAuth 2.1 client credentials, kept fresh."""
