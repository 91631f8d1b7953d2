// Text search over table rows: case-insensitive, every whitespace-separated term must occur
// in one of the row's texts ("conv backward" finds aten::convolution_backward).

export function queryTerms(query: string): string[] {
  return query
    .toLowerCase()
    .split(/\s+/)
    .filter((t) => t !== '');
}

export function matchesTerms(texts: readonly string[], terms: readonly string[]): boolean {
  if (terms.length === 0) return true;
  const haystack = texts.map((t) => t.toLowerCase());
  return terms.every((term) => haystack.some((t) => t.includes(term)));
}

/** The rows matching the query (all rows for an empty query), in their order. */
export function filterRows<R>(
  rows: readonly R[],
  query: string,
  texts: (row: R) => readonly string[],
): R[] {
  const terms = queryTerms(query);
  if (terms.length === 0) return rows.slice();
  return rows.filter((row) => matchesTerms(texts(row), terms));
}
