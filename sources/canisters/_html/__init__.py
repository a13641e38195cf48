"""The HTML pages' engine, shared by :mod:`canisters.html` (pages and the notebook
display), :mod:`canisters.view` (the served store) and the command line."""
