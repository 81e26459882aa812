import { describe, expect, it } from 'vitest';
import { parseScriptArgs, type ScriptSpec, usageOf } from './script-args.js';

const spec: ScriptSpec = {
  command: 'node dist/eval/report.js',
  name: 'report',
  operands: '[DATASET ...]',
  summary: 'Writes the report.',
  options: {
    out: { type: 'string', value: 'DIR', description: 'where it goes' },
    'no-peers': { type: 'boolean', description: 'without the peers' },
  },
  notes: 'LADDER_DATA names the data folder.',
};

describe('parseScriptArgs', () => {
  it('reads flags, values (spaced or after =) and operands in any order', () => {
    expect(parseScriptArgs(spec, ['owl', '--out', 'x', '--no-peers', 'halo2-h2h'])).toEqual({
      kind: 'run',
      values: { out: 'x', 'no-peers': true },
      operands: ['owl', 'halo2-h2h'],
    });
    expect(parseScriptArgs(spec, ['--out=a=b'])).toEqual({ kind: 'run', values: { out: 'a=b' }, operands: [] });
    expect(parseScriptArgs(spec, [])).toEqual({ kind: 'run', values: {}, operands: [] });
  });

  it('answers --help or -h anywhere, even beside a bad option, and never after --', () => {
    for (const argv of [['--help'], ['-h'], ['owl', '--bogus', '--help'], ['--out', 'x', '-h']]) expect(parseScriptArgs(spec, argv).kind, argv.join(' ')).toBe('help');
    expect(parseScriptArgs(spec, ['--', '--help'])).toEqual({ kind: 'run', values: {}, operands: ['--help'] });
  });

  it('names the first bad option', () => {
    expect(parseScriptArgs(spec, ['owl', '--no-peer'])).toEqual({ kind: 'error', message: 'unknown option --no-peer' });
    expect(parseScriptArgs(spec, ['--bogus=3'])).toEqual({ kind: 'error', message: 'unknown option --bogus' });
    expect(parseScriptArgs(spec, ['-x'])).toEqual({ kind: 'error', message: 'unknown option -x' });
    // Inherited object keys are no options.
    expect(parseScriptArgs(spec, ['--toString'])).toEqual({ kind: 'error', message: 'unknown option --toString' });
    expect(parseScriptArgs(spec, ['--out'])).toEqual({ kind: 'error', message: '--out takes a value (DIR)' });
    expect(parseScriptArgs(spec, ['--out', '--no-peers'])).toEqual({ kind: 'error', message: '--out takes a value (DIR)' });
    expect(parseScriptArgs(spec, ['--out='])).toEqual({ kind: 'error', message: '--out takes a value (DIR)' });
    expect(parseScriptArgs(spec, ['--no-peers=yes'])).toEqual({ kind: 'error', message: '--no-peers takes no value' });
  });
});

describe('usageOf', () => {
  it('gives the synopsis, the summary, every option with its value and description, --help, and the notes', () => {
    expect(usageOf(spec)).toBe(
      [
        'usage: node dist/eval/report.js [options] [DATASET ...]',
        '',
        'Writes the report.',
        '',
        'options:',
        '  --out DIR   where it goes',
        '  --no-peers  without the peers',
        '  --help, -h  print this text and exit',
        '',
        'LADDER_DATA names the data folder.',
        '',
      ].join('\n'),
    );
  });
});
