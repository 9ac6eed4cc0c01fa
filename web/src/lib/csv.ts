// CSV export of the tables the dashboard shows (RFC 4180), built in the
// browser: no server round trip, nothing written anywhere but the download.

export type Cell = string | number | boolean | null | undefined;

/** csvCell quotes a value when it holds a comma, a quote or a line break, and defuses spreadsheet formulas. */
export function csvCell(v: Cell): string {
  if (v == null) return '';
  let s = typeof v === 'number' ? (Number.isFinite(v) ? String(v) : '') : String(v);
  // A cell starting with = + - @ (or a tab/CR) runs as a formula in
  // spreadsheets; prefix a quote unless it is a plain number.
  if (/^[=+\-@\t\r]/.test(s) && !(typeof v === 'number' || /^-?\d+(\.\d+)?(e-?\d+)?$/i.test(s))) s = "'" + s;
  return /[",\r\n]/.test(s) ? '"' + s.replace(/"/g, '""') + '"' : s;
}

/** toCSV renders a header row and the rows, lines ended by CRLF. */
export function toCSV(header: string[], rows: Cell[][]): string {
  return [header, ...rows].map((r) => r.map(csvCell).join(',')).join('\r\n') + '\r\n';
}

/** objectsToCSV renders objects by the given columns (key, or [key, header]). */
export function objectsToCSV<T extends object>(items: T[], columns: (keyof T & string | [keyof T & string, string])[]): string {
  const keys = columns.map((c) => (Array.isArray(c) ? c[0] : c));
  const header = columns.map((c) => (Array.isArray(c) ? c[1] : c));
  return toCSV(
    header,
    items.map((it) => keys.map((k) => it[k] as unknown as Cell)),
  );
}

/** downloadCSV offers text as a file download (a Blob URL, revoked right after). */
export function downloadCSV(filename: string, text: string): void {
  const url = URL.createObjectURL(new Blob([text], { type: 'text/csv;charset=utf-8' }));
  const a = document.createElement('a');
  a.href = url;
  a.download = filename;
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}
