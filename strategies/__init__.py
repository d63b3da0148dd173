"""Generation only: the frame catalogue, lifecycle and HTTP cases, random frames, tool arguments. No I/O."""
