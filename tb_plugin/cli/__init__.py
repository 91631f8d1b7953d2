"""The command line: `kinetoscope report`, `check`, `diff`, `trend`, `flamegraph` and
`whatif`, each the JSON of the registry's routes or its text rendering."""
