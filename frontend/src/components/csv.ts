// CSV export of a table as shown (current grouping, filter and sort): RFC 4180 text built
// in the browser, saved through a download link. Pure parts are tested in csv.test.ts.

export type CsvCell = string | number | boolean | null | undefined;
/** The same type under the name the Memory view uses. */
export type CsvValue = CsvCell;

const NEEDS_QUOTES = /[",\r\n]|^\s|\s$/;
/** Text a spreadsheet would run as a formula (CSV injection); numbers are left alone. */
const FORMULA_START = /^[=+\-@\t\r]/;

/** One field: numbers as JavaScript prints them, missing values empty, text quoted if needed. */
export function csvCell(value: CsvCell): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : '';
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  let text = value;
  if (FORMULA_START.test(text) && !Number.isFinite(Number(text))) text = `'${text}`;
  return NEEDS_QUOTES.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** A CSV document: a header line, one line per row, CRLF line ends (RFC 4180). */
export function toCsv(header: readonly string[], rows: readonly (readonly CsvCell[])[]): string {
  const lines = [header.map(csvCell).join(',')];
  for (const row of rows) lines.push(row.map(csvCell).join(','));
  return `${lines.join('\r\n')}\r\n`;
}

/** A file name from parts: "kinetoscope-operators-resnet50-worker0-1.csv". */
export function csvFileName(parts: readonly string[]): string {
  const name = parts
    .map((p) =>
      p
        .replace(/[^A-Za-z0-9._-]+/g, '_')
        .replace(/^[_.]+|_+$/g, '')
        .slice(0, 60),
    )
    .filter((p) => p !== '')
    .join('-');
  return `${name || 'export'}.csv`;
}

/** Saves text as a file through a temporary download link. */
export function downloadText(
  fileName: string,
  text: string,
  type = 'text/csv;charset=utf-8',
): void {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const link = document.createElement('a');
  link.href = url;
  link.download = fileName;
  link.style.display = 'none';
  document.body.appendChild(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/** Saves CSV text (as built by toCsv) as a file. */
export function downloadCsv(fileName: string, csv: string): void {
  downloadText(fileName, csv, 'text/csv;charset=utf-8');
}
