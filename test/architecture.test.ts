import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const core = join(import.meta.dirname, '../src/core');
const sources = readdirSync(core).filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'));

describe('the rating core', () => {
  it('imports nothing outside itself and no I/O module', () => {
    for (const file of sources) {
      const text = readFileSync(join(core, file), 'utf8');
      const imports = [...text.matchAll(/from\s+'([^']+)'/g)].map((m) => m[1]!);
      for (const target of imports) {
        expect(target.startsWith('./'), `${file} imports ${target}`).toBe(true);
      }
      expect(/\bprocess\.|console\.|require\(/.test(text), `${file} does I/O`).toBe(false);
    }
  });

  it('exports by name only from index.ts', () => {
    const index = readFileSync(join(core, 'index.ts'), 'utf8');
    expect(index).not.toMatch(/export\s+default/);
    expect(index).not.toMatch(/export\s+\*/);
  });
});
