/**
 * Match logs: JSON Lines (one match a line, the format of `parseMatch`) or
 * CSV with a column mapping. Every error names the line and the field.
 *
 * CSV mapping keys (`--map key=column,...`; without a map the header's own
 * names are the keys):
 * - `winner`, `loser`: the winning and losing side; or
 * - `a`, `b` with `scoreA`, `scoreB` (raw scores, higher wins, equal draws)
 *   or `result` (team a's result: 1 or win, 0.5 or draw, 0 or loss);
 * - optional `id`, `at` (ISO date or YYYYMMDD), `period`, `weight`,
 *   `context` (a map, mode, surface or level: see `Match.context`);
 * - optional `neutral`: TRUE/true/1 for a neutral venue, anything else puts
 *   the first side (`winner` or `a`) at home (`home: 0`), as in football data.
 * A cell may name several players separated by `|`.
 */
import { InvalidInputError } from 'ladder-core/core/errors.js';
import { type Match, type MatchTeam, parseContext, parseMatch, parseTime } from 'ladder-core/core/match.js';
import { type PairwiseLog, PairwiseLogBuilder } from 'ladder-core/core/pairwise.js';
import { splitCsvLine } from './csv.js';
import { atLine, numberedLines, readInputText } from './jsonl.js';

export type MatchLogFormat = 'jsonl' | 'csv';

export interface MatchLogOptions {
  /** @default from the file name: `.csv` / `.csv.gz` is CSV, anything else JSON Lines */
  format?: MatchLogFormat;
  /** CSV: mapping key → column name. */
  map?: Record<string, string>;
  /**
   * Called with each invalid line's error; the line is then skipped. Without
   * it the first invalid line ends the parse with its error.
   */
  onInvalid?: (error: InvalidInputError) => void;
}

export const CSV_KEYS = ['id', 'at', 'period', 'weight', 'winner', 'loser', 'a', 'b', 'scoreA', 'scoreB', 'result', 'neutral', 'context'] as const;
type CsvKey = (typeof CSV_KEYS)[number];

export function formatOf(source: string, format?: MatchLogFormat): MatchLogFormat {
  if (format) return format;
  return /\.csv(\.gz)?$/i.test(source) ? 'csv' : 'jsonl';
}

/** Parses `key=column,key=column` as given on the command line. */
export function parseColumnMap(text: string): Record<string, string> {
  const map: Record<string, string> = {};
  for (const pair of text.split(',')) {
    if (pair.trim() === '') continue;
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new InvalidInputError(`expected key=column, got ${JSON.stringify(pair)}`, { field: 'map' });
    const key = pair.slice(0, eq).trim();
    if (!(CSV_KEYS as readonly string[]).includes(key)) {
      throw new InvalidInputError(`unknown key ${JSON.stringify(key)}; expected one of ${CSV_KEYS.join(', ')}`, { field: 'map' });
    }
    map[key] = pair.slice(eq + 1).trim();
  }
  return map;
}

/** Parses a whole match log held in memory. */
export function* parseMatchLog(text: string, format: MatchLogFormat, options: MatchLogOptions = {}): Generator<{ line: number; match: Match }> {
  if (format === 'jsonl') {
    for (const { line, text: lineText } of numberedLines(text)) {
      const match = skipping(options.onInvalid, () => {
        let value: unknown;
        try {
          value = JSON.parse(lineText);
        } catch (error) {
          throw new InvalidInputError(`malformed JSON: ${(error as Error).message}`, { line });
        }
        return atLine(line, () => parseMatch(value));
      });
      if (match) yield { line, match };
    }
    return;
  }
  yield* parseCsvMatches(text, options.map, options.onInvalid);
}

function skipping<T>(onInvalid: ((error: InvalidInputError) => void) | undefined, parse: () => T): T | undefined {
  if (!onInvalid) return parse();
  try {
    return parse();
  } catch (error) {
    if (!(error instanceof InvalidInputError)) throw error;
    onInvalid(error);
    return undefined;
  }
}

/** Reads a match log from a file, or standard input for `-`. */
export function readMatchLog(source: string, options: MatchLogOptions = {}): Generator<{ line: number; match: Match }> {
  return parseMatchLog(readInputText(source), formatOf(source, options.format), options);
}

function* parseCsvMatches(
  text: string,
  map: Record<string, string> | undefined,
  onInvalid: ((error: InvalidInputError) => void) | undefined,
): Generator<{ line: number; match: Match }> {
  const lines = numberedLines(text);
  const first = lines.next();
  if (first.done) return;
  const header = splitCsvLine(first.value.text, first.value.line).map((h) => h.trim());
  const column = new Map<CsvKey, number>();
  const names: Partial<Record<CsvKey, string>> = map ?? Object.fromEntries(CSV_KEYS.filter((k) => header.includes(k)).map((k) => [k, k]));
  for (const [key, name] of Object.entries(names) as Array<[CsvKey, string]>) {
    const index = header.indexOf(name);
    if (index === -1) throw new InvalidInputError(`column ${JSON.stringify(name)} (for ${key}) is not in the header`, { field: `map.${key}`, line: first.value.line });
    column.set(key, index);
  }
  const sides = column.has('winner') && column.has('loser') ? 'winner' : column.has('a') && column.has('b') ? 'ab' : undefined;
  if (!sides) throw new InvalidInputError('the CSV needs winner and loser columns, or a and b columns (see --map)', { field: 'map', line: first.value.line });
  if (sides === 'ab' && !column.has('result') && !(column.has('scoreA') && column.has('scoreB'))) {
    throw new InvalidInputError('columns a and b need scoreA and scoreB, or result', { field: 'map', line: first.value.line });
  }

  for (const { line, text: lineText } of lines) {
    const match = skipping(onInvalid, () => csvRow(line, lineText));
    if (match) yield { line, match };
  }

  function csvRow(line: number, lineText: string): Match {
    const cells = splitCsvLine(lineText, line);
    const cell = (key: CsvKey): string | undefined => {
      const index = column.get(key);
      if (index === undefined) return undefined;
      const value = cells[index];
      if (value === undefined) throw new InvalidInputError(`the row has ${cells.length} cells, too few for column ${index + 1}`, { field: key, line });
      return value;
    };
    const players = (key: CsvKey): MatchTeam['players'] => {
      const value = cell(key)!;
      const ids = value.split('|').map((id) => id.trim());
      if (ids.some((id) => id === '')) throw new InvalidInputError('needs at least one player id', { field: key, line });
      return ids.map((id) => ({ id }));
    };
    const number = (key: CsvKey): number => {
      const raw = cell(key)!.trim();
      const value = raw === '' ? NaN : Number(raw);
      if (!Number.isFinite(value) || value < 0) throw new InvalidInputError(`must be a finite, non-negative number, got ${JSON.stringify(raw)}`, { field: key, line });
      return value;
    };
    let match: Match;
    if (sides === 'winner') {
      match = {
        teams: [
          { players: players('winner'), rank: 1 },
          { players: players('loser'), rank: 2 },
        ],
      };
    } else {
      const a = players('a');
      const b = players('b');
      if (column.has('scoreA') && column.has('scoreB')) {
        match = {
          teams: [
            { players: a, score: number('scoreA') },
            { players: b, score: number('scoreB') },
          ],
        };
      } else {
        const raw = cell('result')!.trim().toLowerCase();
        const result = raw === 'win' ? 1 : raw === 'loss' ? 0 : raw === 'draw' ? 0.5 : raw === '' ? NaN : Number(raw);
        if (result !== 0 && result !== 0.5 && result !== 1)
          throw new InvalidInputError(`must be 1, 0.5, 0, win, draw or loss, got ${JSON.stringify(raw)}`, { field: 'result', line });
        match = {
          teams: [
            { players: a, rank: result === 1 ? 1 : result === 0 ? 2 : 1 },
            { players: b, rank: result === 0 ? 1 : result === 1 ? 2 : 1 },
          ],
        };
      }
    }
    const seen = new Set<string>();
    match.teams.forEach((team, t) =>
      team.players.forEach((p) => {
        if (seen.has(p.id)) throw new InvalidInputError(`player ${JSON.stringify(p.id)} is on two teams`, { field: `teams[${t}]`, line });
        seen.add(p.id);
      }),
    );
    const id = cell('id');
    if (id !== undefined && id !== '') match.id = id;
    const at = cell('at');
    if (at !== undefined && at !== '') match.at = atLine(line, () => parseTime(at.trim(), 'at'));
    const period = cell('period');
    if (period !== undefined && period !== '') match.period = period;
    if (column.has('weight')) match.weight = number('weight');
    const context = cell('context')?.trim();
    if (context !== undefined && context !== '') match.context = atLine(line, () => parseContext(context, 'context'));
    if (column.has('neutral')) {
      const neutral = cell('neutral')!.trim().toLowerCase();
      if (!(neutral === 'true' || neutral === '1' || neutral === 'yes')) match.home = 0;
    }
    return match;
  }
}

/**
 * Parses a CSV of one-against-one games straight into columns for the
 * pairwise fast path. Returns undefined when the file is not of that shape
 * (teams of several players, periods or weights), so the caller falls back to
 * the general reader; the two accept and reject exactly the same lines.
 * `onLine` hears the line number every 10 000 lines (a progress bar's count).
 */
export function parsePairwiseCsv(
  text: string,
  map: Record<string, string> | undefined,
  onInvalid?: (error: InvalidInputError) => void,
  onLine?: (line: number) => void,
): PairwiseLog | undefined {
  const builder = new PairwiseLogBuilder();
  let headerEnd = text.indexOf('\n');
  if (headerEnd === -1) headerEnd = text.length;
  const headerText = text.slice(0, headerEnd).replace(/\r$/, '');
  if (headerText.trim() === '') return builder.build();
  const header = splitCsvLine(headerText, 1).map((h) => h.trim());
  const names: Partial<Record<CsvKey, string>> = map ?? Object.fromEntries(CSV_KEYS.filter((k) => header.includes(k)).map((k) => [k, k]));
  if (names.period !== undefined || names.weight !== undefined || names.id !== undefined || names.neutral !== undefined || names.context !== undefined) return undefined;
  const col = (key: CsvKey) => (names[key] === undefined ? -1 : header.indexOf(names[key]!));
  const winnerLoser = col('winner') >= 0 && col('loser') >= 0;
  const [ca, cb] = winnerLoser ? [col('winner'), col('loser')] : [col('a'), col('b')];
  const [csa, csb, cresult] = [col('scoreA'), col('scoreB'), col('result')];
  if (ca < 0 || cb < 0 || (!winnerLoser && cresult < 0 && (csa < 0 || csb < 0))) return undefined;
  if (Object.entries(names).some(([, name]) => !header.includes(name!))) return undefined;
  const cat = col('at');
  const needed = Math.max(ca, cb, csa, csb, cresult, cat) + 1;
  let lastDate = '';
  let lastMs = NaN;
  const dateCache = new Map<number, number>();
  const fieldStart = new Int32Array(needed);
  const fieldEnd = new Int32Array(needed);

  /** The general reading of one row, for anything the scanner below does not take. */
  const slowRow = (line: number, lineText: string): boolean => {
    const cells = splitCsvLine(lineText, line, needed);
    const a = cells[ca];
    const b = cells[cb];
    if (a === undefined || b === undefined) return false;
    if (a.includes('|') || b.includes('|')) return false;
    const ia = a.trim();
    const ib = b.trim();
    if (ia === '') throw new InvalidInputError('needs at least one player id', { field: winnerLoser ? 'winner' : 'a', line });
    if (ib === '') throw new InvalidInputError('needs at least one player id', { field: winnerLoser ? 'loser' : 'b', line });
    if (ia === ib) throw new InvalidInputError(`player ${JSON.stringify(ia)} is on two teams`, { field: 'teams[1]', line });
    const score = winnerLoser ? 1 : csvScore(cells, csa, csb, cresult, line);
    let at = NaN;
    if (cat >= 0) {
      const raw = cells[cat];
      if (raw === undefined) return false;
      if (raw !== '') {
        if (raw !== lastDate) {
          lastMs = atLine(line, () => parseTime(raw.trim(), 'at'));
          lastDate = raw;
        }
        at = lastMs;
      }
    }
    builder.add(ia, ib, score, at);
    return true;
  };

  /** The number field k spells when it is a canonical player number, else -1. */
  const numericPlayer = (k: number): number => {
    const from = fieldStart[k]!;
    const to = fieldEnd[k]!;
    const length = to - from;
    if (length === 0 || length > 15 || (length > 1 && text.charCodeAt(from) === 48)) return -1;
    let value = 0;
    for (let i = from; i < to; i++) {
      const digit = text.charCodeAt(i) - 48;
      if (digit < 0 || digit > 9) return -1;
      value = value * 10 + digit;
    }
    return value;
  };

  /** Epoch ms of a YYYYMMDD field, cached by its value; NaN when the field is not eight digits. */
  const compactDate = (k: number): number => {
    const from = fieldStart[k]!;
    if (fieldEnd[k]! - from !== 8) return NaN;
    let value = 0;
    for (let i = from; i < from + 8; i++) {
      const digit = text.charCodeAt(i) - 48;
      if (digit < 0 || digit > 9) return NaN;
      value = value * 10 + digit;
    }
    let ms = dateCache.get(value);
    if (ms === undefined) {
      ms = Date.UTC(Math.floor(value / 10000), (Math.floor(value / 100) % 100) - 1, value % 100);
      // Date.UTC rolls 20230230 over into March; such a date is not a date.
      const back = new Date(ms);
      if (back.getUTCDate() !== value % 100 || back.getUTCMonth() !== (Math.floor(value / 100) % 100) - 1) return NaN;
      dateCache.set(value, ms);
    }
    return ms;
  };

  let line = 1;
  let position = headerEnd + 1;
  let nextQuote = -1;
  const length = text.length;
  while (position < length) {
    let lineEnd = text.indexOf('\n', position);
    if (lineEnd === -1) lineEnd = length;
    line++;
    if (onLine !== undefined && line % 10_000 === 0) onLine(line);
    let contentEnd = lineEnd;
    if (contentEnd > position && text.charCodeAt(contentEnd - 1) === 13) contentEnd--;
    const lineStart = position;
    position = lineEnd + 1;
    if (contentEnd === lineStart) continue;
    try {
      // The scanner takes plain rows (no quotes) of one-against-one games with
      // numeric ids; everything else goes through the general reading.
      let plain = winnerLoser;
      if (plain) {
        // One forward search for quotes over the whole text, not one per line.
        if (nextQuote < lineStart) {
          nextQuote = text.indexOf('"', lineStart);
          if (nextQuote === -1) nextQuote = Infinity;
        }
        plain = nextQuote >= contentEnd;
      }
      let k = 0;
      if (plain) {
        let fieldFrom = lineStart;
        for (; k < needed; k++) {
          let comma = text.indexOf(',', fieldFrom);
          if (comma === -1 || comma > contentEnd) comma = contentEnd;
          fieldStart[k] = fieldFrom;
          fieldEnd[k] = comma;
          if (comma === contentEnd) {
            k++;
            break;
          }
          fieldFrom = comma + 1;
        }
      }
      const a = plain && k >= needed ? numericPlayer(ca) : -1;
      const b = a >= 0 ? numericPlayer(cb) : -1;
      const at = b >= 0 && cat >= 0 ? compactDate(cat) : NaN;
      // Players are interned only once the row is known good, as the general reading does.
      if (a < 0 || b < 0 || a === b || (cat >= 0 && Number.isNaN(at))) {
        const lineText = text.slice(lineStart, contentEnd);
        if (lineText.trim() === '') continue;
        if (!slowRow(line, lineText)) return undefined;
        continue;
      }
      builder.addIndexed(builder.numericPlayerIndex(a), builder.numericPlayerIndex(b), 1, at);
    } catch (error) {
      if (!(error instanceof InvalidInputError) || !onInvalid) throw error;
      onInvalid(error);
    }
  }
  return builder.build();
}

function csvScore(cells: string[], csa: number, csb: number, cresult: number, line: number): number {
  if (csa >= 0 && csb >= 0) {
    const sa = csvNumber(cells[csa], 'scoreA', line);
    const sb = csvNumber(cells[csb], 'scoreB', line);
    return sa > sb ? 1 : sa < sb ? 0 : 0.5;
  }
  const raw = (cells[cresult] ?? '').trim().toLowerCase();
  const result = raw === 'win' ? 1 : raw === 'loss' ? 0 : raw === 'draw' ? 0.5 : raw === '' ? NaN : Number(raw);
  if (result !== 0 && result !== 0.5 && result !== 1) throw new InvalidInputError(`must be 1, 0.5, 0, win, draw or loss, got ${JSON.stringify(raw)}`, { field: 'result', line });
  return result;
}

function csvNumber(cell: string | undefined, field: string, line: number): number {
  const raw = (cell ?? '').trim();
  const value = raw === '' ? NaN : Number(raw);
  if (!Number.isFinite(value) || value < 0) throw new InvalidInputError(`must be a finite, non-negative number, got ${JSON.stringify(raw)}`, { field, line });
  return value;
}
