"""Generation only: the frame catalogue, lifecycle cases and (later) Hypothesis strategies. No I/O."""
