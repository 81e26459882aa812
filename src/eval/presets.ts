/**
 * The evaluation data sets with their published protocols: how each is
 * loaded and split, which of Ladder's systems run on it with which
 * parameters (fixed, or fitted on the training part), which peers, and the
 * published numbers to compare with. `ladder evaluate --dataset NAME` and the
 * report (report.ts) run these.
 */
import { InvalidInputError } from 'ladder-core/core/errors.js';
import { HOME_ADVANTAGE_FIT } from 'ladder-core/core/descriptor.js';
import { describeSystem } from 'ladder-core/core/registry.js';
import type { SystemName } from 'ladder-core/core/systems.js';
import { type Contender, type CoreContenderOptions, type EvalMatch, fiveThirtyEightEloContender, systemContender } from './contenders.js';
import { chessMonth, loadChess, loadFootball, loadHalo2, loadOverwatch, loadTennisKdd19, loadTennisTour, type TourMatch } from './datasets.js';
import type { DrawHandling, EvaluationOptions, ScoredMatches } from './engine.js';
import type { ParameterSpec } from './fit.js';

/** One row of our own: a system with fixed options, or options fitted on the training part. */
export interface SystemRun {
  /** Row label, e.g. `elo (K fitted)`. */
  label: string;
  system: SystemName | 'elo-538';
  options?: Record<string, number | string>;
  contender?: CoreContenderOptions;
  /** Parameters to fit on the training part; names are system options, or `homeAdvantage`. */
  fit?: ParameterSpec[];
}

export interface PublishedRow {
  model: string;
  logLoss?: number;
  accuracy?: number;
  /** Other numbers, as printed (e.g. "87/117 correct"). */
  note?: string;
  source: string;
}

export interface PeerConfig {
  openskill?: Record<string, number>;
  trueskill?: { mu?: number; sigma?: number; beta?: number; tau?: number; drawProbability?: number };
  /** Row label suffix for a second TrueSkill row, etc. */
  label?: string;
}

export interface DatasetPreset {
  name: string;
  title: string;
  /** How the split reads in a table. */
  split: string;
  load: () => EvalMatch[];
  isTest: EvaluationOptions['isTest'];
  isScored?: EvaluationOptions['isScored'];
  scored?: ScoredMatches;
  draws?: DrawHandling;
  runs: SystemRun[];
  /** Peer configurations; draw probabilities may be filled from the training part by `peerContenders`. */
  peers: PeerConfig[];
  published: PublishedRow[];
  /** Counts to report (e.g. wrong predictions) rather than rates. */
  reportCounts?: boolean;
}

const KDD = 'Maystre, Kristof & Grossglauser, KDD 2019 (kickscore-kdd19 notebooks, via data/BENCHMARKS.md)';

/** Natural-log learning rate 0.262 on the 400-point scale: K = 0.262 × 400 / ln 10. */
export const KDD19_ELO_K = (0.262 * 400) / Math.LN10;

export function createRunContender(run: SystemRun, fitted: Record<string, number> = {}): Contender {
  if (run.system === 'elo-538') return fiveThirtyEightEloContender(run.options ?? {});
  const { homeAdvantage, ...systemOptions } = { ...run.options, ...fitted };
  const contenderOptions: CoreContenderOptions = { ...run.contender };
  if (homeAdvantage !== undefined) {
    if (typeof homeAdvantage !== 'number') throw new InvalidInputError(`homeAdvantage must be a number, got ${JSON.stringify(homeAdvantage)}`, { field: 'homeAdvantage' });
    contenderOptions.homeAdvantage = homeAdvantage;
  }
  return systemContender(run.system, systemOptions, contenderOptions);
}

/** A system's default fit parameters with their ranges from the registry, any of them narrowed for a protocol. */
function fitOf(name: SystemName, narrowed: Record<string, Partial<ParameterSpec>> = {}): ParameterSpec[] {
  const { fit } = describeSystem(name);
  return fit.byDefault.map((parameter) => ({ ...fit.parameters.find((p) => p.name === parameter)!, ...narrowed[parameter] }));
}
const glickoFit = fitOf('glicko2');
// The published rows search Elo's K from 4, not from the command line's 1.
const eloFit = (): ParameterSpec[] => fitOf('elo', { k: { min: 4 } });
const homeFit: ParameterSpec = { ...HOME_ADVANTAGE_FIT };
/** Whole-History Rating's two variances, over the ranges `ladder fit` searches. */
const whrFit = fitOf('whr');
/** Its context deviations' two variances (σc², wc²), over the ranges `ladder fit` searches. */
const whrContextFit: ParameterSpec[] = describeSystem('whr').fit.parameters.filter((p) => p.name === 'contextPriorVariance' || p.name === 'contextDailyVariance');
/** The rows with contexts measured before deviations were smoothed jointly with the general skill by default: as they were measured. */
const FACTORISED = { contextInference: 'factorised' } as const;

/**
 * The context variances the Overwatch League row "whr, map variances fitted"
 * chose on its training part (2018), at the default general variances: the
 * Halo 2 files have no training part, so their context row takes these.
 */
export const OWL_WHR_CONTEXT_VARIANCES = { contextPriorVariance: 1.1346798966626295, contextDailyVariance: 0.01466296016264734, contextInference: 'factorised' } as const;

/**
 * The Overwatch League row "whr, variances and map variances fitted" (row 10)
 * as fitted on its training part (2018), with four passes over a closed day's
 * players: the configuration with the lowest validation log-loss of those
 * compared on that training part (docs/EVALUATION.md). Halo 2 LargeTeam,
 * with no training part, takes it as a whole.
 */
export const OWL_WHR_CHOSEN = {
  priorVariance: 2.481712434827949,
  dailyVariance: 0.034772674615579646,
  contextPriorVariance: 2.396809601468398,
  contextDailyVariance: 0.0038877081863537707,
  sweeps: 4,
  // Fitted and chosen with each deviation a timeline of its own, as it was measured.
  contextInference: 'factorised',
} as const;

/** The two Halo 2 beta files share their protocol: every game online, scored once a player was seen before. */
function halo2Preset(name: string, file: 'HeadToHead' | 'LargeTeam', title: string, published: PublishedRow[], extraRuns: SystemRun[] = []): DatasetPreset {
  return {
    name,
    title,
    split: 'no training part: every game predicted, then learnt; scored if a player was seen before',
    load: () => loadHalo2(file),
    isTest: () => true,
    scored: 'any-seen',
    draws: 'davidson',
    reportCounts: true,
    runs: [
      { label: 'elo, K 32', system: 'elo' },
      { label: 'glicko2, defaults', system: 'glicko2' },
      { label: 'teamrank, defaults', system: 'teamrank' },
      { label: 'whr, defaults', system: 'whr' },
      ...extraRuns,
    ],
    peers: [{ openskill: {} }, { trueskill: {} }],
    published,
  };
}

export const PRESETS: DatasetPreset[] = [
  {
    name: 'tennis-kdd19',
    title: 'ATP tennis, all levels 1991–2017 (KDD 2019 protocol)',
    split: 'train before 2011-08-28, test from it (online)',
    load: () => loadTennisKdd19(),
    isTest: (m) => m.at! >= Date.UTC(2011, 7, 28),
    runs: [
      { label: "elo, K 45.5 (the paper's lr 0.262)", system: 'elo', options: { k: KDD19_ELO_K } },
      { label: 'elo, K fitted', system: 'elo', fit: eloFit() },
      { label: 'glicko2, defaults, no idle growth', system: 'glicko2', contender: { continuousTime: false } },
      { label: 'glicko2, defaults, RD grows per idle day', system: 'glicko2' },
      { label: 'glicko2, tau and RD fitted, RD grows per idle day', system: 'glicko2', fit: glickoFit },
      { label: 'teamrank, defaults', system: 'teamrank' },
      { label: 'whr, defaults', system: 'whr' },
      { label: 'whr, variances fitted', system: 'whr', fit: whrFit },
      // σc² of the level-of-play deviations chosen on the training part's last 30 % from 0.005, 0.02, 0.08 (and wc² from 0, 1e-5, 1e-4 at 0.02):
      // a two-parameter golden-section fit on this file takes hours with contexts (docs/EVALUATION.md).
      { label: 'whr, level-of-play deviations (σc² chosen on training)', system: 'whr', options: { contextPriorVariance: 0.02, contextInference: 'factorised' } },
      // A newcomer's learning curve: a and τ fitted on the training part's last 30 % (fitParameters over the loader's matches,
      // the search of `ladder fit --fit newcomerTrend,newcomerTrendPeriods --rounds 1 --tolerance 0.1`: 18 runs, 685 s), at the
      // default variances; stored as fixed options, since the fit takes over ten minutes (docs/EVALUATION.md).
      {
        label: "whr, newcomers' learning curve (a, τ fitted on training)",
        system: 'whr',
        options: { newcomerTrend: 0.0028772681447025846, newcomerTrendPeriods: 760.9209156123852 },
      },
      // Row 9's deviations smoothed jointly with the general skill (the default since): σc² chosen again on the training
      // part's last 30 % from 0.02 and 0.08 (0.57086 and 0.57110, against factorised 0.57087 and 0.57111; docs/EVALUATION.md).
      { label: 'whr, level-of-play deviations smoothed jointly (σc² chosen on training)', system: 'whr', options: { contextPriorVariance: 0.02 } },
    ],
    peers: [{ openskill: {} }, { trueskill: { mu: 0, sigma: 0.3701, beta: Math.SQRT1_2, tau: 0.0808, drawProbability: 0 }, label: "the paper's TrueSkill parameters" }],
    published: [
      { model: 'random', logLoss: 0.693, accuracy: 0.5, source: KDD },
      { model: 'Elo, lr 0.262 (≈ K 45.5)', logLoss: 0.563, accuracy: 0.705, source: KDD },
      { model: 'TrueSkill μ0 0, σ0 0.3701, β 1/√2, τ 0.0808', logLoss: 0.563, accuracy: 0.705, source: KDD },
      { model: 'kickscore, constant skill', logLoss: 0.581, accuracy: 0.689, source: KDD },
      { model: 'kickscore, Wiener (best)', logLoss: 0.552, accuracy: 0.714, source: KDD },
    ],
  },
  {
    name: 'atp-usopen-2016',
    title: 'ATP tour level 1968–2016, scored on the 117 completed US Open 2016 matches',
    split: 'learn 1968 to the US Open; score tourney 2016-560, completed matches only',
    load: () => loadTennisTour(1968, 2016),
    isTest: (m) => m.at! >= Date.UTC(2016, 7, 29),
    isScored: (m) => (m as TourMatch).tourneyId === '2016-560' && !(m as TourMatch).incomplete,
    reportCounts: true,
    runs: [
      { label: 'FiveThirtyEight Elo, K = 250/(5+m)^0.4', system: 'elo-538' },
      { label: 'elo, K 32', system: 'elo' },
      { label: 'elo, K fitted', system: 'elo', fit: eloFit() },
      { label: 'glicko2, defaults, RD grows per idle day', system: 'glicko2' },
      { label: 'glicko2, tau and RD fitted', system: 'glicko2', fit: glickoFit },
    ],
    peers: [{ openskill: {} }, { trueskill: { drawProbability: 0 } }],
    published: [
      { model: 'Pinnacle odds', note: '90/117 (76.92%)', source: 'Tennis Abstract blog, 2017-01-15' },
      { model: 'FiveThirtyEight Elo', note: '88/117 (75.21%)', source: 'Tennis Abstract blog, 2017-01-15' },
      { model: 'Tennis Abstract Elo', note: '87/117 (74.36%)', source: 'Tennis Abstract blog, 2017-01-15' },
      { model: 'ATP ranking', note: '85/117 (72.65%)', source: 'Tennis Abstract blog, 2017-01-15' },
    ],
  },
  {
    name: 'chess-kaggle2010',
    title: 'Kaggle chess 2010 (draws): months 1–95 train, 96–100 test',
    split: 'train months 1–95, test 96–100 (online, game by game)',
    load: () => loadChess(),
    isTest: (m) => chessMonth(m) >= 96,
    draws: 'davidson',
    runs: [
      { label: 'elo, K 32', system: 'elo' },
      { label: 'elo, K fitted', system: 'elo', fit: eloFit() },
      { label: 'elo, K and white advantage fitted', system: 'elo', fit: [...eloFit(), homeFit] },
      { label: 'glicko2, defaults', system: 'glicko2' },
      { label: 'glicko2, tau and RD fitted', system: 'glicko2', fit: glickoFit },
      { label: 'glicko2, tau, RD and white advantage fitted', system: 'glicko2', fit: [...glickoFit, homeFit] },
      { label: 'teamrank, defaults', system: 'teamrank' },
      { label: 'whr, defaults', system: 'whr' },
      { label: 'whr, variances fitted', system: 'whr', fit: whrFit },
      { label: 'whr, variances and white advantage fitted', system: 'whr', fit: [...whrFit, homeFit] },
    ],
    peers: [{ openskill: {} }, { trueskill: {} }],
    published: [{ model: 'none on this split (Kaggle scored months 101–105 by player-month RMSE; that test set is not public)', source: 'chess_kaggle2010/SOURCE.md' }],
  },
  {
    name: 'football-intl',
    title: 'International football 1872–2026 (draws, scores, neutral venues)',
    split: "train before 2011-06-03 (kickscore's football cutoff), test from it",
    load: () => loadFootball(),
    isTest: (m) => m.at! >= Date.UTC(2011, 5, 3),
    draws: 'davidson',
    runs: [
      { label: 'elo, K fitted, no home advantage', system: 'elo', fit: eloFit() },
      { label: 'elo, K and home advantage fitted', system: 'elo', fit: [...eloFit(), homeFit] },
      { label: 'glicko2, tau and RD fitted, no home advantage', system: 'glicko2', fit: glickoFit },
      { label: 'glicko2, tau, RD and home advantage fitted', system: 'glicko2', fit: [...glickoFit, homeFit] },
      { label: 'wvw (goal margin), tau and RD fitted, no home advantage', system: 'wvw', fit: glickoFit },
      { label: 'wvw (goal margin), tau, RD and home advantage fitted', system: 'wvw', fit: [...glickoFit, homeFit] },
      { label: 'teamrank, defaults', system: 'teamrank' },
      { label: 'whr, defaults, no home advantage', system: 'whr' },
      { label: 'whr, variances fitted, no home advantage', system: 'whr', fit: whrFit },
      { label: 'whr, variances and home advantage fitted', system: 'whr', fit: [...whrFit, homeFit] },
    ],
    peers: [{ openskill: {} }, { trueskill: {} }],
    published: [
      {
        model:
          'kickscore KDD 2019 "World football" (a different extract: 19,158 matches, cutoff 2011-06-03): Elo 0.950/0.551, TrueSkill 0.937/0.554, kickscore 0.926/0.558, with home advantage 0.900/0.579 (3-way log-loss / accuracy)',
        source: KDD,
      },
    ],
  },
  halo2Preset('halo2-h2h', 'HeadToHead', 'Halo 2 beta HeadToHead (1v1), all games online', [
    { model: 'TrueSkill', note: 'wrong on 2,305 of 5,848 (39.415%)', source: 'openskill.js issue #64 (2021-02-28)' },
    { model: 'OpenSkill', note: 'wrong on 2,305 of 5,848 (39.415%)', source: 'openskill.js issue #64 (2021-02-28)' },
  ]),
  halo2Preset(
    'halo2-largeteam',
    'LargeTeam',
    'Halo 2 beta LargeTeam (uneven teams up to 8v8), all games online',
    [{ model: 'none retrievable (TrueSkill NIPS 2006 and Weng & Lin 2011 tables: get them from the PDFs)', source: 'halo2_beta/SOURCE.md' }],
    // No training part to fit on: the game variant's deviations take the variances fitted for maps on OWL's training part.
    [
      { label: "whr, game-variant deviations at OWL's fitted map variances", system: 'whr', options: OWL_WHR_CONTEXT_VARIANCES },
      // Every parameter from OWL's training part: the configuration chosen there (owl row 11), taken as it is.
      { label: "whr, OWL's chosen configuration (owl row 11: its four variances, four passes)", system: 'whr', options: OWL_WHR_CHOSEN },
    ],
  ),
  {
    name: 'owl',
    title: 'Overwatch League maps 2018–2019 (6v6 lineups, drawn maps)',
    split: 'train on 2018, test on 2019 (online)',
    load: () => loadOverwatch(),
    isTest: (m) => m.at! >= Date.UTC(2019, 0, 1),
    draws: 'davidson',
    runs: [
      { label: 'elo, K 32', system: 'elo' },
      { label: 'elo, K fitted', system: 'elo', fit: eloFit() },
      { label: 'glicko2, defaults', system: 'glicko2' },
      { label: 'glicko2, tau and RD fitted', system: 'glicko2', fit: glickoFit },
      { label: 'wvw (map-score margin), defaults', system: 'wvw' },
      { label: 'teamrank, defaults', system: 'teamrank' },
      { label: 'whr, defaults', system: 'whr' },
      { label: 'whr, variances fitted', system: 'whr', fit: whrFit },
      { label: 'whr, map variances fitted', system: 'whr', options: FACTORISED, fit: whrContextFit },
      { label: 'whr, variances and map variances fitted', system: 'whr', options: FACTORISED, fit: [...whrFit, ...whrContextFit] },
      // Row 10's fitted variances with four passes over a closed day's players (two, three, four, eight compared on the training part's last 30 %).
      { label: 'whr, row 10 with four passes a closed day (chosen on training)', system: 'whr', options: OWL_WHR_CHOSEN },
    ],
    peers: [{ openskill: {} }, { trueskill: {} }],
    published: [{ model: 'no published accuracy table for this data', source: 'overwatch_league_rosters/SOURCE.md' }],
  },
];

export function findPreset(name: string): DatasetPreset | undefined {
  return PRESETS.find((p) => p.name === name);
}

/** Share of drawn matches in the training part: TrueSkill's draw probability where a preset leaves it open. */
export function trainingDrawRate(training: readonly EvalMatch[]): number {
  let draws = 0;
  for (const m of training) {
    const a = m.teams[0]!;
    const b = m.teams[1]!;
    if (a.rank !== undefined ? a.rank === b.rank : a.score === b.score) draws++;
  }
  return training.length ? draws / training.length : 0;
}
