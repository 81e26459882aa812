/**
 * Every `ladder` command that README.md and docs/*.md show must exist as
 * written: each option a synopsis names is one of the command's options, a
 * complete command parses (required options, arguments, numbers), and the
 * cheap ones whose input is at hand run and exit 0.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { COMMANDS, ladderProgram } from '../src/cli/program.js';
import { ROOT, runLadder } from './support/cli.js';
import { codeBlocks, type DocumentedCommand, documentedCommands, projectDocs, SHELL_BLOCKS } from './support/markdown.js';

const commands = projectDocs().flatMap(([file, text]) => documentedCommands(file, text));
const label = (c: DocumentedCommand) => `${c.file}:${c.line} ladder ${c.args.join(' ')}`;

/** A word standing for a value the reader fills in: FILE, N, <dataset>, [--json], a|b, …. */
const isPlaceholder = (word: string) => /[[\]|<>…]|\.\.\./.test(word) || /^[A-Z][A-Z0-9_]*(\.[a-z]+)?$/.test(word);

/** Commands cheap enough to run in the test, given their input exists. */
const RUNNABLE = new Set(['replay', 'performance', 'matchmake', 'evaluate']);

/** Parses a command line with every action replaced by one that records the command's arguments. */
async function parse(args: readonly string[]): Promise<string[]> {
  const program = await ladderProgram();
  let operands: string[] = [];
  program.configureOutput({ writeOut: () => {}, writeErr: () => {}, outputError: () => {} });
  for (const command of program.commands) {
    command.configureOutput({ writeOut: () => {}, writeErr: () => {}, outputError: () => {} });
    command.action((...received: unknown[]) => {
      operands = (received.at(-1) as Command).args;
    });
  }
  await program.parseAsync(['node', 'ladder', ...args]);
  return operands;
}

describe('shell blocks paste into a shell', () => {
  // A synopsis in a shell block runs `a|b|c` as a pipeline (exit 127) and `[--json]` as a glob: synopses go in ```synopsis blocks.
  const shell = projectDocs()
    .flatMap(([file, text]) => codeBlocks(file, text))
    .filter((block) => SHELL_BLOCKS.has(block.language));
  it.each(shell.map((block) => [`${block.file}:${block.line}`, block] as const))('%s holds no synopsis', (_, block) => {
    const synopsisLines = block.text
      .split('\n')
      .filter((line) => !/^\s*#/.test(line) && (/\[--|\[[A-Z]/.test(line) || /\b[a-z0-9-]+\|[a-z0-9-]+\|/.test(line) || /\s\.\.\.(\s|$)/.test(line)));
    expect(synopsisLines).toEqual([]);
  });
});

describe('documented ladder commands', () => {
  it('finds the commands of README.md and docs/*.md', () => {
    expect(commands.length).toBeGreaterThan(20);
    expect(new Set(commands.map((c) => c.args[0]))).toEqual(new Set(Object.keys(COMMANDS)));
  });

  it.each(commands.map((c) => [label(c), c] as const))('%s names only options the command has', async (_, c) => {
    const name = c.args[0]!;
    expect(Object.keys(COMMANDS)).toContain(name);
    const program = await ladderProgram([name]);
    const known = new Set([...program.commands[0]!.options.map((o) => o.long), '--help']);
    const named = c.args
      .slice(1)
      .flatMap((word) => word.replace(/[[\]]/g, '').split('|'))
      .filter((word) => word.startsWith('--'))
      .map((word) => word.split('=')[0]!);
    expect(named.filter((option) => !known.has(option))).toEqual([]);
  });

  // Commands in code blocks are meant to be typed as they stand; prose quotes parts of commands.
  const complete = commands.filter((c) => c.inBlock && !c.args.some(isPlaceholder));
  it.each(complete.map((c) => [label(c), c] as const))('%s parses as written', async (_, c) => {
    await expect(parse(c.args)).resolves.toBeDefined();
  });

  const runnable = complete.filter((c) => RUNNABLE.has(c.args[0]!));
  it('runs some commands for real', () => expect(runnable.length).toBeGreaterThan(2));
  it.each(runnable.map((c) => [label(c), c] as const))(
    '%s runs and exits 0',
    async (_, c) => {
      const inputs = await parse(c.args);
      const missing = inputs.filter((input) => !existsSync(resolve(ROOT, input)));
      // Data kept outside the repository (../shared/data) may be absent: then the command is only parsed.
      if (missing.some((input) => input.startsWith('../'))) return;
      expect(missing).toEqual([]);
      const run = runLadder(c.args);
      expect(run.stderr.replace(/^ladder: skipped \d+ invalid line\(s\):\n( {2}.*\n)*/, '')).toBe('');
      expect(run.status).toBe(0);
      // A transcript shows what the command prints: it must still print that.
      if (c.output !== undefined) expect(run.stdout.trimEnd()).toBe(c.output.trimEnd());
      // An evaluation of the 619,377-match ATP file takes several seconds, more on a loaded machine.
    },
    180_000,
  );
});
