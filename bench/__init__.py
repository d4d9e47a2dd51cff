"""toolwire benchmarks: timed as ratios against peers run in the same process. Not tests."""
