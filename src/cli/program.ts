/**
 * The `ladder` program: its commands, each in its own module, and the
 * settings every command shares. Only the modules of the commands asked for
 * are loaded, so `ladder replay` does not pay for the service's dependencies.
 */
import { Command } from 'commander';

type Register = (program: Command) => void;

export const COMMANDS: Record<string, () => Promise<{ register: Register }>> = {
  replay: () => import('./replay.js'),
  performance: () => import('./performance.js'),
  matchmake: () => import('./matchmake.js'),
  simulate: () => import('./simulate.js'),
  evaluate: () => import('./evaluate.js'),
  fit: () => import('./fit.js'),
  serve: () => import('./serve.js'),
  rebuild: () => import('./rebuild.js'),
};

/** The command `name` names, if it is one (own keys only: `in` would also find `toString`). */
export function commandNamed(name: string | undefined): string | undefined {
  return name !== undefined && Object.hasOwn(COMMANDS, name) ? name : undefined;
}

/**
 * The program with the named commands registered (all of them by default).
 * Usage errors come back as CommanderError exceptions, never printed or
 * exited on by commander itself, so the caller reports them in one format.
 */
export async function ladderProgram(names: readonly string[] = Object.keys(COMMANDS)): Promise<Command> {
  const program = new Command();
  program
    .name('ladder')
    .description('Ratings, standings and matchmaking for competitive online games')
    .version('0.1.0')
    .exitOverride()
    .configureOutput({ outputError: () => {} });
  for (const name of names) (await COMMANDS[name]!()).register(program);
  return program;
}
