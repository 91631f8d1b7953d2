"""Roofline: the work of each op call from its shapes (`formulas`, `nn_formulas`,
`families`), the device's roofs (`peaks`, data/device_peaks.json), work per op-tree node
and per GPU activity (`work`), and the row fields of groups of calls (`metrics`)."""
