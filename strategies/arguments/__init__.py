"""Call arguments from a JSON Schema: valid, one-rule-broken, edges, coverage, harvested values."""
