#!/usr/bin/env node
/**
 * The `ladder` command line (the commands are in program.ts, one module each).
 */
import { CommanderError } from 'commander';
import { failUsage, unknownOptionFirst } from './errors.js';
import { commandNamed, ladderProgram } from './program.js';

// A reader that stops early (`| head`) is not an error.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(0);
  throw error;
});

const command = commandNamed(process.argv[2]);
// Only the command being run is loaded; without one (help, a typo) all are, to list them.
const program = await ladderProgram(command !== undefined ? [command] : undefined);
try {
  await program.parseAsync(process.argv);
} catch (error) {
  if (!(error instanceof CommanderError)) throw error;
  failUsage(unknownOptionFirst(error, program, command, process.argv.slice(3)), command);
}
