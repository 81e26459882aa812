/**
 * The command line of Ladder's scripts (the benchmarks under src/bench and
 * the evaluation report), the ones not run through `ladder`: each declares
 * its options once, and this module answers `--help` / `-h` with the usage
 * text (exit 0, before any work), and an unknown option, a missing value or
 * a bad number with one line naming the option (exit 2).
 */
import { pathToFileURL } from 'node:url';

export interface ScriptOption {
  /** `string` takes a value (`--out DIR` or `--out=DIR`); `boolean` is a flag. */
  type: 'string' | 'boolean';
  /** The value's placeholder in the usage text, e.g. `DIR`. @default 'VALUE' */
  value?: string;
  description: string;
}

export interface ScriptSpec {
  /** The command as typed, e.g. `node dist/eval/report.js`. */
  command: string;
  /** The word that starts its error lines. @default command */
  name?: string;
  /** The operands after the options in the synopsis, e.g. `[DATASET ...]`; none when absent. */
  operands?: string;
  /** One or more lines saying what the script does. */
  summary: string;
  options: Record<string, ScriptOption>;
  /** Lines after the options (environment variables, examples). */
  notes?: string;
}

export interface ScriptArgs {
  /** The value of each option given: a string for a `string` option, `true` for a flag. */
  values: Record<string, string | true>;
  operands: string[];
}

export type ParsedScriptArgs = { kind: 'help'; text: string } | { kind: 'error'; message: string } | ({ kind: 'run' } & ScriptArgs);

/** The usage text: synopsis, summary, one line per option (and `--help`), notes. */
export function usageOf(spec: ScriptSpec): string {
  const entries: Array<[string, string]> = Object.entries(spec.options).map(([name, option]) => [
    option.type === 'string' ? `--${name} ${option.value ?? 'VALUE'}` : `--${name}`,
    option.description,
  ]);
  entries.push(['--help, -h', 'print this text and exit']);
  const width = Math.max(...entries.map(([left]) => left.length));
  const lines = [
    `usage: ${spec.command}${Object.keys(spec.options).length ? ' [options]' : ''}${spec.operands ? ` ${spec.operands}` : ''}`,
    '',
    spec.summary.trimEnd(),
    '',
    'options:',
    ...entries.map(([left, right]) => `  ${left.padEnd(width)}  ${right}`),
  ];
  if (spec.notes) lines.push('', spec.notes.trimEnd());
  return `${lines.join('\n')}\n`;
}

/**
 * Reads `argv` (the arguments after the script) against `spec` without side
 * effects: help when `--help` or `-h` appears anywhere (before `--`), else an
 * error naming the first bad option, else the values and operands.
 */
export function parseScriptArgs(spec: ScriptSpec, argv: readonly string[]): ParsedScriptArgs {
  const end = argv.indexOf('--');
  const options = end < 0 ? argv : argv.slice(0, end);
  if (options.includes('--help') || options.includes('-h')) return { kind: 'help', text: usageOf(spec) };
  const values: Record<string, string | true> = {};
  const operands: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const word = argv[i]!;
    if (i === end) {
      operands.push(...argv.slice(i + 1));
      break;
    }
    if (!word.startsWith('-') || word === '-') {
      operands.push(word);
      continue;
    }
    const equals = word.indexOf('=');
    const name = word.startsWith('--') ? word.slice(2, equals < 0 ? undefined : equals) : '';
    const option = Object.hasOwn(spec.options, name) ? spec.options[name] : undefined;
    const shown = equals < 0 ? word : word.slice(0, equals);
    if (!option) return { kind: 'error', message: `unknown option ${shown}` };
    if (option.type === 'boolean') {
      if (equals >= 0) return { kind: 'error', message: `${shown} takes no value` };
      values[name] = true;
      continue;
    }
    const value = equals >= 0 ? word.slice(equals + 1) : argv[i + 1];
    if (value === undefined || value === '' || (equals < 0 && value.startsWith('--'))) {
      return { kind: 'error', message: `${shown} takes a value (${option.value ?? 'VALUE'})` };
    }
    values[name] = value;
    if (equals < 0) i++;
  }
  return { kind: 'run', values, operands };
}

/**
 * The script's arguments: prints the usage and exits 0 on `--help`, prints
 * `<script>: <message> (see --help)` and exits 2 on a bad option; else
 * returns them. Call it before any work.
 */
export function scriptArgs(spec: ScriptSpec, argv: readonly string[] = process.argv.slice(2)): ScriptArgs {
  const parsed = parseScriptArgs(spec, argv);
  if (parsed.kind === 'help') {
    process.stdout.write(parsed.text);
    process.exit(0);
  }
  if (parsed.kind === 'error') usageError(spec, parsed.message);
  return { values: parsed.values, operands: parsed.operands };
}

/** Prints a usage error in the script's words and exits 2. */
export function usageError(spec: ScriptSpec, message: string): never {
  process.stderr.write(`${spec.name ?? spec.command}: ${message} (see ${spec.command} --help)\n`);
  process.exit(2);
}

/** The string value of an option, or undefined when it was not given. */
export function textOption(args: ScriptArgs, name: string): string | undefined {
  const value = args.values[name];
  return typeof value === 'string' ? value : undefined;
}

/** A number option: undefined when not given; a usage error (exit 2) naming it unless a finite number, positive when asked. */
export function numberOption(spec: ScriptSpec, args: ScriptArgs, name: string, check: 'any' | 'positive' = 'positive'): number | undefined {
  const text = textOption(args, name);
  if (text === undefined) return undefined;
  const value = Number(text);
  if (!Number.isFinite(value) || (check === 'positive' && !(value > 0))) {
    usageError(spec, `--${name} must be a ${check === 'positive' ? 'positive ' : ''}number, got ${JSON.stringify(text)}`);
  }
  return value;
}

/** A comma-separated list of positive numbers (`--sizes 1000,10000`), or undefined when not given. */
export function numberListOption(spec: ScriptSpec, args: ScriptArgs, name: string): number[] | undefined {
  const text = textOption(args, name);
  if (text === undefined) return undefined;
  const values = text.split(',').map(Number);
  if (values.some((value) => !Number.isFinite(value) || !(value > 0)))
    usageError(spec, `--${name} must be a comma-separated list of positive numbers, got ${JSON.stringify(text)}`);
  return values;
}

/** One of the allowed words, or `fallback` when not given; a usage error naming the option otherwise. */
export function choiceOption<T extends string>(spec: ScriptSpec, args: ScriptArgs, name: string, allowed: readonly T[], fallback: T): T {
  const given = textOption(args, name) ?? fallback;
  if (!(allowed as readonly string[]).includes(given)) usageError(spec, `--${name} must be one of ${allowed.join(', ')}, got ${JSON.stringify(given)}`);
  return given as T;
}

/** Whether the module whose `import.meta.url` is given is the script Node was started with (built or through tsx). */
export function isEntry(moduleUrl: string): boolean {
  const started = process.argv[1];
  return started !== undefined && pathToFileURL(started).href === moduleUrl;
}
