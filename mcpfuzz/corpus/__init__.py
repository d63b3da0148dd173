"""The failure corpus: one redacted, atomically written JSON transcript per distinct failure."""
