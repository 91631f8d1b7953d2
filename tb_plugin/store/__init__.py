"""The trace store: the columnar model, its disk cache, and loads off the request thread."""
