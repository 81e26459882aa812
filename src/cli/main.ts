#!/usr/bin/env node
/**
 * The `ladder` command line: each command lives in its own module and
 * registers itself here. Only the module of the command being run is
 * loaded, so `ladder replay` does not pay for the service's dependencies.
 */
import { Command } from 'commander';

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
  .showHelpAfterError();

const requested = process.argv[2];
const names = requested !== undefined && requested in commands ? [requested] : Object.keys(commands);
for (const name of names) (await commands[name]!()).register(program);

await program.parseAsync(process.argv);
