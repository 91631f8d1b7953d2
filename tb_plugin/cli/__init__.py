"""The command line: `kinetoscope report`, `check`, `diff`, `trend` and `flamegraph`, each
the JSON of the registry's routes or its text rendering."""
