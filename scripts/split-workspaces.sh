#!/usr/bin/env bash
# Splits the repository into two npm workspaces, mechanically:
#   src/{core,standings,matchmaking,integrity}  ->  packages/core/src/{...}   (package `ladder-core`)
# and rewrites every reference to the moved folders in the tracked files:
#   - outside packages/core, an import of a moved module becomes a package import:
#     `../core/index.js` -> `ladder-core`, `../standings/index.js` -> `ladder-core/standings`,
#     `../core/errors.js` -> `ladder-core/core/errors.js` (a module path under the package's src/);
#   - inside packages/core, a relative path that leaves the moved folders (test support,
#     fixtures, benchmarks) is recomputed from the file's new place;
#   - a path written from the repository root (`src/core/ids.ts` in a comment, a doc, a config
#     glob) or a relative one that climbs to the root (`../src/core/x.ts` in a doc) gains
#     `packages/core/`.
# The package files, configs and docs that need judgement are separate, hand-made edits.
#
# Run from anywhere inside a clean checkout: `bash scripts/split-workspaces.sh`. It refuses a
# dirty tree or an already split one, so running it twice changes nothing.
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"

MOVED=(core standings matchmaking integrity)

if [[ -e packages/core/src/core ]]; then
  echo "split-workspaces: packages/core/src/core exists; the split is already done" >&2
  exit 1
fi
for dir in "${MOVED[@]}"; do
  [[ -d "src/$dir" ]] || { echo "split-workspaces: src/$dir is missing" >&2; exit 1; }
done
if [[ -n "$(git status --porcelain --untracked-files=no)" ]]; then
  echo "split-workspaces: the work tree has uncommitted changes; commit or stash them first" >&2
  exit 1
fi

mkdir -p packages/core/src
for dir in "${MOVED[@]}"; do git mv "src/$dir" "packages/core/src/$dir"; done

node --input-type=module - "${MOVED[@]}" <<'NODE'
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { posix } from 'node:path';

const moved = process.argv.slice(2);
const PKG = 'packages/core';
const NAME = 'ladder-core';

/** Old repository path (`src/core/x.ts`) -> new one (`packages/core/src/core/x.ts`); anything else unchanged. */
function toNew(path) {
  for (const dir of moved) if (path === `src/${dir}` || path.startsWith(`src/${dir}/`)) return `${PKG}/${path}`;
  return path;
}
/** New path -> old path. */
function toOld(path) {
  for (const dir of moved) if (path === `${PKG}/src/${dir}` || path.startsWith(`${PKG}/src/${dir}/`)) return path.slice(PKG.length + 1);
  return path;
}
const inPackage = (path) => path.startsWith(`${PKG}/`);
/** The package specifier of a moved module, for a file outside the package. */
function packageSpec(target) {
  const inner = target.slice(`${PKG}/src/`.length);
  if (inner === 'core/index.js') return NAME;
  for (const dir of moved) if (inner === `${dir}/index.js`) return `${NAME}/${dir}`;
  return `${NAME}/${inner}`;
}

const CODE = /\.(ts|mts|cts|mjs|cjs|js)$/;
const TEXT = /\.(ts|mts|cts|mjs|cjs|js|json|jsonc|md)$/;
const files = execFileSync('git', ['ls-files', '-z'], { encoding: 'utf8' })
  .split('\0')
  .filter((f) => f && TEXT.test(f) && f !== 'package-lock.json' && !f.includes('/fixtures/') && !f.startsWith('node_modules/') && !f.includes('/vendor/'));

/** (A) Relative strings in code: `'../x'`, `"./y"`, and the static head of a template literal up to `${`. */
function rewriteRelative(file, text) {
  const oldFile = toOld(file);
  const oldDir = posix.dirname(oldFile);
  const newDir = posix.dirname(file);
  const fileMoved = oldFile !== file;
  return text.replace(/(['"`])(\.\.?\/[^'"`\s$]*)(?=\1|\$\{)/g, (whole, quote, spec) => {
    const oldTarget = posix.normalize(posix.join(oldDir, spec));
    if (oldTarget.startsWith('..')) return whole;
    const newTarget = toNew(oldTarget);
    const targetMoved = newTarget !== oldTarget;
    if (!fileMoved && !targetMoved) return whole;
    // Only paths that exist (a file or, for a template's head, a folder) are rewritten: a string that merely looks like a path stays.
    if (!existsSync(newTarget) && !existsSync(newTarget.replace(/\.js$/, '.ts'))) return whole;
    if (!inPackage(file) && targetMoved && /\.js$/.test(spec)) return quote + packageSpec(newTarget);
    let next = posix.relative(newDir, newTarget) || '.';
    if (!next.startsWith('.')) next = `./${next}`;
    if (spec.endsWith('/') && !next.endsWith('/')) next += '/';
    return quote + next;
  });
}

/** (B) Paths written from the root (`src/core/ids.ts`) or climbing to it (`../src/core`): they gain `packages/core/`. */
function rewriteRootPaths(file, text) {
  const newDir = posix.dirname(file);
  const oldDir = posix.dirname(toOld(file));
  const dirs = moved.join('|');
  const re = new RegExp(`(?<![\\w.\\-/@])((?:\\.\\.?/)*)src/(${dirs})(?![\\w-])`, 'g');
  return text.replace(re, (whole, prefix, dir) => {
    if (prefix === '') return `${PKG}/src/${dir}`;
    if (posix.normalize(posix.join(oldDir, prefix)) !== '.') return whole;
    const up = posix.relative(newDir, '.') || '.';
    return `${up}/${PKG}/src/${dir}`;
  });
}

let changed = 0;
for (const file of files) {
  if (!existsSync(file)) continue;
  const before = readFileSync(file, 'utf8');
  let after = before;
  if (CODE.test(file)) after = rewriteRelative(file, after);
  after = rewriteRootPaths(file, after);
  if (after !== before) {
    writeFileSync(file, after);
    changed++;
  }
}
process.stderr.write(`split-workspaces: moved ${moved.length} folders, rewrote ${changed} files\n`);
NODE

git add -u
