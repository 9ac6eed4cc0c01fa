import { describe, expect, it } from 'vitest';
import { csvCell, objectsToCSV, toCSV } from './csv';

describe('CSV', () => {
  it('quotes what needs quoting', () => {
    expect(csvCell('plain')).toBe('plain');
    expect(csvCell('a,b')).toBe('"a,b"');
    expect(csvCell('say "hi"')).toBe('"say ""hi"""');
    expect(csvCell('two\nlines')).toBe('"two\nlines"');
    expect(csvCell(null)).toBe('');
    expect(csvCell(undefined)).toBe('');
    expect(csvCell(0.0001194)).toBe('0.0001194');
    expect(csvCell(true)).toBe('true');
    expect(csvCell(NaN)).toBe('');
  });
  it('defuses spreadsheet formulas but not negative numbers', () => {
    expect(csvCell('=HYPERLINK("x")')).toBe('"\'=HYPERLINK(""x"")"');
    expect(csvCell('+1+2')).toBe("'+1+2");
    expect(csvCell('@SUM(A1)')).toBe("'@SUM(A1)");
    expect(csvCell(-2.5)).toBe('-2.5');
    expect(csvCell('-2.5')).toBe('-2.5');
  });
  it('renders rows with CRLF', () => {
    expect(toCSV(['a', 'b'], [[1, 'x,y'], [null, 2]])).toBe('a,b\r\n1,"x,y"\r\n,2\r\n');
  });
  it('renders objects by column', () => {
    const rows = [{ key: 'openai/gpt-4o', requests: 900, costUsd: 3.6 }];
    expect(objectsToCSV(rows, [['key', 'model'], 'requests', ['costUsd', 'cost_usd']])).toBe('model,requests,cost_usd\r\nopenai/gpt-4o,900,3.6\r\n');
  });
});
