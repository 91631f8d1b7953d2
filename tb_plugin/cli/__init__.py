"""`kinetoscope report` and its text rendering."""
