import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './cli.js';

/** README.md and every docs/*.md, as [path relative to the project, text]. */
export function projectDocs(): Array<[file: string, text: string]> {
  const docs = readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`);
  return ['README.md', ...docs].map((file) => [file, readFileSync(join(ROOT, file), 'utf8')]);
}

export interface CodeBlock {
  file: string;
  /** Line of the opening fence, 1-based. */
  line: number;
  /** The info string after the fence: `ts`, `sh`, or '' for none. */
  language: string;
  text: string;
}

/** The fenced code blocks of a markdown text. */
export function codeBlocks(file: string, markdown: string): CodeBlock[] {
  const blocks: CodeBlock[] = [];
  let open: CodeBlock | undefined;
  markdown.split('\n').forEach((line, i) => {
    const fence = /^\s*```(.*)$/.exec(line);
    if (fence && !open) open = { file, line: i + 1, language: fence[1]!.trim(), text: '' };
    else if (fence && open) {
      blocks.push(open);
      open = undefined;
    } else if (open) open.text += `${line}\n`;
  });
  return blocks;
}

export interface DocumentedCommand {
  file: string;
  line: number;
  /** The words after `ladder` (quotes removed), e.g. ['replay', '--system', 'elo', 'log.jsonl']. */
  args: string[];
  /** Written in a code block (to be run as is), not quoted in a sentence. */
  inBlock: boolean;
  /** In a transcript (`$ ladder …` followed by what it prints): the lines shown as its output. */
  output?: string;
}

/** Code blocks that hold commands; others (`text`, `json`, `ts`) hold output, data or code. */
export const SHELL_BLOCKS = new Set(['', 'sh', 'bash', 'shell', 'console']);
/** Blocks of synopses (`a|b`, `[--json]`, FILE): commands to read, never to paste into a shell. */
export const SYNOPSIS_BLOCKS = new Set(['synopsis']);

/** Splits a command line into words the way a shell would for the simple quoting docs use. */
function words(text: string): string[] {
  const out: string[] = [];
  for (const match of text.matchAll(/'([^']*)'|"([^"]*)"|(\S+)/g)) out.push(match[1] ?? match[2] ?? match[3]!);
  return out;
}

/**
 * The arguments of a `ladder …` or `npx ladder …` command line (after any
 * `VAR=value` settings), or undefined: the word after `ladder` must look like
 * a command name, so prose and SQL that happen to start with "ladder" are not taken.
 */
function ladderArgs(line: string): string[] | undefined {
  const list = words(line.replace(/^\s*\$\s+/, '').replace(/\s+#\s.*$/, ''));
  while (list.length > 0 && /^[A-Z_]+=/.test(list[0]!)) list.shift();
  if (list[0] === 'npx') list.shift();
  if (list[0] !== 'ladder' || !/^[a-z][a-z-]*$/.test(list[1] ?? '')) return undefined;
  return list.slice(1);
}

/**
 * Every `ladder` command of a markdown text: lines of code blocks (joining
 * lines that end in `\` and indented lines that continue a synopsis) and
 * inline code spans in the prose.
 */
export function documentedCommands(file: string, markdown: string): DocumentedCommand[] {
  const commands: DocumentedCommand[] = [];
  for (const block of codeBlocks(file, markdown)) {
    const synopsis = SYNOPSIS_BLOCKS.has(block.language);
    if (!SHELL_BLOCKS.has(block.language) && !synopsis) continue;
    const lines = block.text.replace(/\n$/, '').split('\n');
    for (let i = 0; i < lines.length; i++) {
      let text = lines[i]!;
      const first = i;
      if (ladderArgs(text) === undefined) continue;
      while (i + 1 < lines.length && (text.endsWith('\\') || /^\s+\[--/.test(lines[i + 1]!))) text = `${text.replace(/\\$/, '')} ${lines[++i]!}`;
      const command: DocumentedCommand = { file, line: block.line + 1 + first, args: ladderArgs(text)!, inBlock: !synopsis };
      if (/^\s*\$\s/.test(text)) {
        const output: string[] = [];
        while (i + 1 < lines.length && !/^\s*\$\s/.test(lines[i + 1]!)) output.push(lines[++i]!);
        command.output = output.join('\n');
      }
      commands.push(command);
    }
  }
  let inFence = false;
  markdown.split('\n').forEach((line, i) => {
    if (/^\s*```/.test(line)) inFence = !inFence;
    if (inFence) return;
    for (const span of line.matchAll(/`([^`]+)`/g)) {
      const args = ladderArgs(span[1]!);
      if (args) commands.push({ file, line: i + 1, args, inBlock: false });
    }
  });
  return commands;
}
