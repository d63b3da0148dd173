"""Long runs: slices over targets, the scheduler, checkpoints and worker processes."""
