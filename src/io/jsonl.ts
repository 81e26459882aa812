/**
 * Reading line-based input files (JSON Lines, CSV), gzip-aware, with line
 * numbers for every error.
 */
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { InvalidInputError } from 'ladder-core/core/errors.js';

/** Reads a whole file (or standard input for `-`) as text, gunzipping `.gz`. */
export function readInputText(source: string): string {
  let bytes: Buffer;
  try {
    bytes = readFileSync(source === '-' ? 0 : source);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new InvalidInputError(code === 'ENOENT' ? `no such file: ${source}` : `cannot read ${source}: ${(error as Error).message}`, { field: 'input' });
  }
  if (bytes.length >= 2 && bytes[0] === 0x1f && bytes[1] === 0x8b) {
    // The gzip trailer holds the size (mod 2^32): one output chunk of that
    // size saves zlib growing and concatenating many small ones.
    const size = bytes.length >= 18 ? bytes.readUInt32LE(bytes.length - 4) : 0;
    bytes = gunzipSync(bytes, size > 0 && size < 1 << 30 ? { chunkSize: Math.max(64 * 1024, size + 1024) } : {});
  }
  return bytes.toString('utf8');
}

/** Splits text into lines, keeping 1-based line numbers and skipping blank lines. */
export function* numberedLines(text: string): Generator<{ line: number; text: string }> {
  let start = 0;
  let line = 0;
  const length = text.length;
  while (start < length) {
    let end = text.indexOf('\n', start);
    if (end === -1) end = length;
    line++;
    let lineText = text.slice(start, end);
    if (lineText.endsWith('\r')) lineText = lineText.slice(0, -1);
    if (lineText.trim() !== '') yield { line, text: lineText };
    start = end + 1;
  }
}

/** Parses JSON Lines: one JSON value a line, blank lines skipped. */
export function* parseJsonLines(text: string): Generator<{ line: number; value: unknown }> {
  for (const { line, text: lineText } of numberedLines(text)) {
    let value: unknown;
    try {
      value = JSON.parse(lineText);
    } catch (error) {
      throw new InvalidInputError(`malformed JSON: ${(error as Error).message}`, { line });
    }
    yield { line, value };
  }
}

/** Reads a JSON Lines file (or `-` for stdin). */
export function readJsonLines(source: string): Generator<{ line: number; value: unknown }> {
  return parseJsonLines(readInputText(source));
}

/** Wraps a parse step so an InvalidInputError it throws names the input line. */
export function atLine<T>(line: number, parse: () => T): T {
  try {
    return parse();
  } catch (error) {
    if (error instanceof InvalidInputError) throw error.atLine(line);
    throw error;
  }
}
