"""Stream parsers, one per family, on one shared incremental lexer (:mod:`toolwire.parsers.engine.lexer`)."""
