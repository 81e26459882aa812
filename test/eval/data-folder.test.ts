import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { dataRoot, loadOverwatch, MissingDataError } from '../../src/eval/datasets.js';
import { ROOT, runLadder } from '../support/cli.js';

describe('the evaluation data folder', () => {
  const saved = process.env.LADDER_DATA;
  afterEach(() => {
    if (saved === undefined) delete process.env.LADDER_DATA;
    else process.env.LADDER_DATA = saved;
  });

  it('is ../shared/data beside the project unless LADDER_DATA names another', () => {
    delete process.env.LADDER_DATA;
    expect(resolve(dataRoot())).toBe(resolve(ROOT, '..', 'shared', 'data'));
    process.env.LADDER_DATA = join(ROOT, 'elsewhere');
    expect(dataRoot()).toBe(join(ROOT, 'elsewhere'));
  });

  it('a missing file is a MissingDataError naming it, not a stack trace', () => {
    process.env.LADDER_DATA = join(ROOT, 'no-such-folder');
    expect(() => loadOverwatch()).toThrow(MissingDataError);
    expect(() => loadOverwatch()).toThrow(/^data file .*no-such-folder.*owl_2018_maps\.csv not found \(data folder from LADDER_DATA\)/);
  });

  it('a missing folder stops `ladder evaluate --dataset` with one line and exit 2', () => {
    const missing = join(ROOT, 'no-such-folder');
    const run = runLadder(['evaluate', '--dataset', 'owl', '--row', '1'], { env: { LADDER_DATA: missing } });
    expect(run.status).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toBe(`ladder: data folder ${missing} not found (data folder from LADDER_DATA); set LADDER_DATA to the folder that holds the evaluation data sets\n`);
  });
});
