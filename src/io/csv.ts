/**
 * A small RFC 4180 CSV reader: quoted fields, doubled quotes, CRLF. Quoted
 * fields may not span lines (match logs never need it), which keeps line
 * numbers exact for error messages.
 */
import { InvalidInputError } from 'ladder-core/core/errors.js';

/**
 * Splits one CSV line into its fields. With `limit`, only the first that
 * many are returned, so a reader that needs a few leading columns does not
 * pay for the rest.
 */
export function splitCsvLine(text: string, line: number, limit = Infinity): string[] {
  if (text.indexOf('"') === -1) {
    if (limit === Infinity) return text.split(',');
    const out: string[] = [];
    let start = 0;
    while (out.length < limit) {
      const comma = text.indexOf(',', start);
      if (comma === -1) {
        out.push(text.slice(start));
        break;
      }
      out.push(text.slice(start, comma));
      start = comma + 1;
    }
    return out;
  }
  const fields: string[] = [];
  let i = 0;
  while (i <= text.length) {
    if (text[i] === '"') {
      let value = '';
      i++;
      for (;;) {
        const quote = text.indexOf('"', i);
        if (quote === -1) throw new InvalidInputError('unterminated quoted field', { line });
        value += text.slice(i, quote);
        if (text[quote + 1] === '"') {
          value += '"';
          i = quote + 2;
        } else {
          i = quote + 1;
          break;
        }
      }
      if (i < text.length && text[i] !== ',') throw new InvalidInputError(`unexpected character after a quoted field at column ${i + 1}`, { line });
      fields.push(value);
      i++;
    } else {
      let comma = text.indexOf(',', i);
      if (comma === -1) comma = text.length;
      fields.push(text.slice(i, comma));
      i = comma + 1;
    }
  }
  return fields;
}
