/**
 * How tests reach `ladder-core` (packages/core) without building it: its package.json maps each
 * entry point to its TypeScript source under the export condition `ladder-source`. Vite resolves
 * the test files' imports with it (`conditions`); NODE_OPTIONS carries it into everything Node
 * resolves itself: the test processes' workers and every child process (tsx runs of the CLI), which
 * inherit the variable through childEnv(). A test of an installed tarball, which ships no sources,
 * runs its children with `withoutSourceCondition()`.
 */
export const SOURCE_CONDITION = 'ladder-source';
const FLAG = `--conditions=${SOURCE_CONDITION}`;

/** Vite's default server-side conditions (its `defaultServerConditions`), the source condition first. */
export const conditions = [SOURCE_CONDITION, 'module', 'node', 'development|production'];

/** Adds the condition to this process's NODE_OPTIONS (once), for the processes vitest starts after it. */
export function useSourceCondition(): void {
  const options = process.env.NODE_OPTIONS ?? '';
  if (!options.split(/\s+/).includes(FLAG)) process.env.NODE_OPTIONS = `${options} ${FLAG}`.trim();
}

/** NODE_OPTIONS without the condition, for a child that must resolve packages as an installed copy does. */
export function withoutSourceCondition(options = process.env.NODE_OPTIONS ?? ''): string | undefined {
  const rest = options
    .split(/\s+/)
    .filter((option) => option && option !== FLAG)
    .join(' ');
  return rest || undefined;
}
