"""toolwire's own fuzz suite for the stream parsers (issue 11 section 3).

* :mod:`fuzz.families` - per-format pieces: the Format's own ``markers``, the family's syntax, stop tokens,
  the sentinel alphabet (characters in no marker or syntax of any family) and golden seed outputs;
* :mod:`fuzz.strategies` - hypothesis marker-soup strategies built from those pieces;
* :mod:`fuzz.invariants` - the one invariant checker every fuzz test (and the atheris target) calls;
* :mod:`fuzz.atheris_target` - the coverage-guided entry point; :mod:`fuzz.run_atheris` its bounded runner.

See docs/fuzzing.md.
"""
