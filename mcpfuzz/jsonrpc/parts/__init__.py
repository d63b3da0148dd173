"""What each oracle needs to know about a case: one module per part, each registered under its key."""
