"""Tools built on toolwire: the ``toolwire`` command line and what it runs.

- :mod:`toolwire.workbench.cli`: the ``toolwire`` console script;
- :mod:`toolwire.workbench.demo`: ``toolwire demo`` (bundled conversation and output in ``demo_data/``);
- :mod:`toolwire.workbench.fidelity`: ``toolwire fidelity``, native renderer vs Jinja template, token by token;
  :mod:`toolwire.workbench.fidelity_report` writes its summary, progress bar, HTML and JSON reports.

Evaluation and grammar tools land here too. The workbench may import anything in toolwire; nothing outside
the workbench imports it.
"""
