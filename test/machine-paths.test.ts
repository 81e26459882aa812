/**
 * Nothing in the repository may name a folder that exists on one machine
 * only: data sets are found beside the project (`../shared/data`) or through
 * LADDER_DATA, and docs name paths relative to the project.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { childEnv } from './support/test-env.js';

const ROOT = join(import.meta.dirname, '..');

/** An absolute path into a user's or a machine's own folders (not `/tmp`, not a URL's path). */
const MACHINE_PATH = /(?:^|[\s'"`(=,:])(\/(?:work|home|root|Users|mnt|srv|opt)\/[\w.-]+|[A-Z]:\\(?:Users|work)\\)/;

/** Files allowed to hold such a path, each with the reason (none today). */
const KNOWN: Record<string, string> = {};

describe('machine paths', () => {
  it('no tracked file names a folder of one machine', () => {
    const files = execFileSync('git', ['ls-files'], { cwd: ROOT, encoding: 'utf8', env: childEnv() })
      .split('\n')
      .filter((f) => /\.(ts|js|json|md|sh|yml|yaml|html|css)$/.test(f) || f.startsWith('.ci/'));
    expect(files.length).toBeGreaterThan(50);
    const found: string[] = [];
    for (const file of files) {
      if (file === 'package-lock.json' || file in KNOWN) continue;
      readFileSync(join(ROOT, file), 'utf8')
        .split('\n')
        .forEach((line, i) => {
          const hit = MACHINE_PATH.exec(line);
          if (hit) found.push(`${file}:${i + 1}: ${hit[1]}`);
        });
    }
    expect(found).toEqual([]);
  });

  it('recognises the paths it looks for', () => {
    // Built from parts, so this file does not name such a path itself.
    const absolute = (...parts: string[]) => ['', ...parts].join('/');
    for (const line of [
      `return process.env.LADDER_DATA ?? '${absolute('work', 'shared', 'data')}';`,
      `read from \`${absolute('home', 'ann', 'data')}\``,
      ['C:', 'Users', 'ann'].join('\\'),
    ]) {
      expect(line).toMatch(MACHINE_PATH);
    }
    for (const line of ['--cpu-prof-dir=/tmp/prof', 'https://example.com/home/page', '../shared/data/tennis_atp']) expect(line).not.toMatch(MACHINE_PATH);
  });
});
