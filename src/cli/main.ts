#!/usr/bin/env node
/**
 * The `ladder` command line: each command lives in its own module and
 * registers itself here.
 */
import { Command } from 'commander';
import { register as registerReplay } from './replay.js';
import { register as registerPerformance } from './performance.js';
import { register as registerMatchmake } from './matchmake.js';

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

registerReplay(program);
registerPerformance(program);
registerMatchmake(program);

await program.parseAsync(process.argv);
