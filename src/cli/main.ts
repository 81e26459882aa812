#!/usr/bin/env node
/**
 * The `ladder` command line: each command lives in its own module and
 * registers itself here. Only the module of the command being run is
 * loaded, so `ladder replay` does not pay for the service's dependencies.
 */
import { Command, CommanderError } from 'commander';
import { failUsage } from './errors.js';

type Register = (program: Command) => void;

const commands: Record<string, () => Promise<{ register: Register }>> = {
  replay: () => import('./replay.js'),
  performance: () => import('./performance.js'),
  matchmake: () => import('./matchmake.js'),
  simulate: () => import('./simulate.js'),
  evaluate: () => import('./evaluate.js'),
  fit: () => import('./fit.js'),
  serve: () => import('./serve.js'),
  rebuild: () => import('./rebuild.js'),
};

// A reader that stops early (`| head`) is not an error.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(0);
  throw error;
});

const program = new Command();
program
  .name('ladder')
  .description('Ratings, standings and matchmaking for competitive online games')
  .version('0.1.0')
  // Usage errors come back as exceptions and are reported in the `ladder:` format (failUsage).
  .exitOverride()
  .configureOutput({ outputError: () => {} });

const requested = process.argv[2];
// Own keys only: `in` would also find `toString` and the other Object members.
const command = requested !== undefined && Object.hasOwn(commands, requested) ? requested : undefined;
const names = command !== undefined ? [command] : Object.keys(commands);
for (const name of names) (await commands[name]!()).register(program);

try {
  await program.parseAsync(process.argv);
} catch (error) {
  if (!(error instanceof CommanderError)) throw error;
  failUsage(error, command);
}
