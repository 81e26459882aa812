import { api } from '../api.js';
import { lineChart } from '../charts.js';
import { clear, errorBox, errorMessage, formatNumber, h, table } from '../ui.js';
import { systemInfo } from '../systems.js';

const PRESETS = {
  'blog-example': {
    label: 'Three wins, then three losses, all against 1500',
    text: '1500 win\n1500 win\n1500 win\n1500 loss\n1500 loss\n1500 loss',
  },
  'giant-killer': {
    label: 'Beats stronger players, loses to weaker ones',
    text: '1700 win\n1650 win\n1400 loss\n1750 win\n1350 loss\n1600 draw',
  },
  'all-wins': {
    label: 'Five wins and no loss (no finite rating: clamped)',
    text: '1500 win\n1620 win\n1480 win\n1710 win\n1550 win',
  },
  'blitz-weights': {
    label: 'Mixed long and blitz games (blitz weighs a third)',
    text: '1550 win 1\n1500 win 0.333\n1600 loss 1\n1450 win 0.333\n1580 draw 1\n1620 loss 0.333\n1490 win 1',
  },
};

const RESULTS = { win: 'win', w: 'win', 1: 'win', loss: 'loss', lose: 'loss', l: 'loss', 0: 'loss', draw: 'draw', d: 'draw', 0.5: 'draw', '½': 'draw' };

/**
 * Parses "opponent result [weight]" lines, separated by spaces, commas or tabs.
 * Throws naming the line, so a paste from a spreadsheet is easy to fix.
 */
export function parseGames(text) {
  const trimmed = text.trim();
  if (trimmed.startsWith('[') || trimmed.startsWith('{')) {
    const parsed = JSON.parse(trimmed);
    return Array.isArray(parsed) ? parsed : parsed.games;
  }
  const games = [];
  trimmed.split(/\r?\n/).forEach((line, index) => {
    const content = line.replace(/#.*/, '').trim();
    if (!content) return;
    const [opponentText, resultText, weightText] = content.split(/[\s,;]+/);
    const opponent = Number(opponentText);
    if (!Number.isFinite(opponent)) throw new Error(`line ${index + 1}: opponent rating “${opponentText}” is not a number`);
    const result = RESULTS[(resultText ?? '').toLowerCase()];
    if (!result) throw new Error(`line ${index + 1}: result “${resultText ?? ''}” must be win, loss or draw`);
    const game = { opponent, result };
    if (weightText !== undefined) {
      const weight = Number(weightText);
      // Zero is allowed: the service ignores a zero-weight game, as a record of it.
      if (!(weight >= 0)) throw new Error(`line ${index + 1}: weight “${weightText}” must be a number, 0 or more`);
      game.weight = weight;
    }
    games.push(game);
  });
  if (games.length === 0) throw new Error('enter at least one game');
  return games;
}

/** `clampable`: the method has no finite answer for a run of only wins or only losses (packages/core/src/core/performance.ts). */
const ALGORITHMS = [
  { key: 'algo400', label: 'Algorithm of 400', help: 'average opponent + 400 × (wins − losses) / games', clampable: false },
  { key: 'maxLikelihood', label: 'Maximum likelihood', help: 'the rating most likely to produce these results', clampable: true },
  { key: 'netzero', label: 'Netzero', help: 'the start rating that ends the run, in this order, where it began', clampable: true },
  { key: 'netzeroUnordered', label: 'Unordered netzero', help: 'the fixed rating whose gains and losses sum to zero', clampable: true },
];

/**
 * Whether the service clamped the run's ratings, and which way: { direction:
 * 'above' | 'below', opponent } or null. The answer's `clamped` field
 * ('above', 'below' or null; `true` is read as "clamped, direction from the
 * games") says so when the service sends it; otherwise it follows from the
 * games as the service decides it: every game of positive weight a win
 * (above) or every one a loss (below).
 */
export function clampOf(games, result) {
  const counted = games.filter((game) => (game.weight ?? 1) > 0);
  const opponents = counted.map((game) => game.opponent);
  let direction;
  if (result && Object.hasOwn(result, 'clamped')) {
    const flag = result.clamped;
    direction = flag === 'above' || flag === 'below' ? flag : flag === true ? recordDirection(counted) : null;
  } else direction = recordDirection(counted);
  if (direction !== 'above' && direction !== 'below') return null;
  return { direction, opponent: direction === 'above' ? Math.max(...opponents) : Math.min(...opponents) };
}

function recordDirection(counted) {
  if (counted.length > 0 && counted.every((game) => game.result === 'win')) return 'above';
  if (counted.length > 0 && counted.every((game) => game.result === 'loss')) return 'below';
  return null;
}

export async function render(main, { signal }) {
  main.append(
    h('h1', { tabindex: '-1' }, 'Performance rating'),
    h(
      'p',
      { class: 'explain' },
      'Paste a run of games or pick an example to compare four ways of rating how well the run was played, next to the rating path the run produces under Elo.',
    ),
  );
  const gamesInput = h('textarea', { id: 'games', rows: '8', spellcheck: 'false', 'aria-describedby': 'games-help' }, PRESETS['blog-example'].text);
  const kInput = h('input', { id: 'k', type: 'number', min: '1', max: '400', step: '1', value: '32', inputmode: 'numeric' });
  const preset = h(
    'select',
    { id: 'preset' },
    Object.entries(PRESETS).map(([key, value]) => h('option', { value: key }, value.label)),
  );
  preset.addEventListener('change', () => {
    gamesInput.value = PRESETS[preset.value].text;
    form.requestSubmit();
  });
  const output = h('div', { id: 'performance-output', 'aria-live': 'polite' });
  let chart;
  let form;
  // Loading a player's games rates them at once, so the cards always describe the games in the box.
  const fromPlayer = await playerRunPicker(gamesInput, signal, () => form.requestSubmit());

  form = h(
    'form',
    { id: 'performance-form', class: 'stack' },
    h('div', { class: 'field' }, h('label', { for: 'preset' }, 'Example run'), preset),
    fromPlayer,
    h(
      'div',
      { class: 'field' },
      h('label', { for: 'games' }, 'Games'),
      h('p', { id: 'games-help', class: 'meta' }, 'One game a line: opponent rating, result (win, loss or draw), optional weight. Spaces or commas between.'),
      gamesInput,
    ),
    h('div', { class: 'field narrow' }, h('label', { for: 'k' }, 'Elo K for the path and netzero'), kInput),
    h('button', { type: 'submit' }, 'Rate this run'),
  );
  // Only the newest run is shown: an older answer arriving late is dropped.
  let runs = 0;
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const run = ++runs;
    chart?.destroy();
    chart = undefined;
    clear(output);
    let games;
    try {
      games = parseGames(gamesInput.value);
    } catch (error) {
      output.append(errorBox(error));
      gamesInput.focus();
      return;
    }
    output.setAttribute('aria-busy', 'true');
    try {
      const k = Number(kInput.value);
      const result = await api.performance({ games, ...(Number.isFinite(k) && k > 0 ? { k } : {}) }, { signal });
      if (run === runs) chart = showResult(output, games, result);
    } catch (error) {
      if (run === runs) output.append(errorBox(error));
    } finally {
      if (run === runs) output.removeAttribute('aria-busy');
    }
  });
  main.append(form, output);
  form.requestSubmit();
  return () => chart?.destroy();
}

function showResult(output, games, result) {
  const clamp = clampOf(games, result);
  output.append(
    h(
      'dl',
      { class: 'stats big', id: 'performance-ratings', dataset: { clamped: clamp ? clamp.direction : 'no' } },
      ALGORITHMS.map((algorithm) => {
        const clamped = clamp !== null && algorithm.clampable;
        return h(
          'div',
          { class: clamped ? 'clamped' : null, dataset: { algorithm: algorithm.key }, title: algorithm.help },
          h('dt', {}, algorithm.label),
          h('dd', {}, formatNumber(result[algorithm.key], 1)),
          clamped ? h('p', { class: 'clamp-flag' }, clamp.direction === 'above' ? 'clamped: at least the best opponent + 800' : 'clamped: at most the worst opponent − 800') : null,
          h('p', { class: 'meta' }, algorithm.help),
        );
      }),
    ),
  );
  if (clamp) {
    const record = clamp.direction === 'above' ? 'only wins' : 'only losses';
    const bound = clamp.direction === 'above' ? `the best opponent (${formatNumber(clamp.opponent, 0)}) + 800` : `the worst opponent (${formatNumber(clamp.opponent, 0)}) − 800`;
    output.append(
      h(
        'p',
        { class: 'notice', id: 'performance-clamped' },
        h('strong', {}, 'Clamped: '),
        `a run of ${record} has no finite maximum-likelihood or netzero rating, so those three show a stand-in: ${clamp.direction === 'above' ? 'at least' : 'at most'} ${bound}, further out when needed so that a ${clamp.direction === 'above' ? 'better run still rates higher' : 'worse run still rates lower'}. The algorithm of 400 needs no clamp.`,
      ),
    );
  }
  // The API's path holds the rating after each game, starting from the opponents' average
  // (api.md); the start is drawn too so the first game's move shows.
  const after = result.path ?? [];
  const start = games.reduce((sum, game) => sum + game.opponent, 0) / games.length;
  const path = after.length === games.length ? [start, ...after] : after;
  const x = path.map((_value, index) => index);
  const flat = (key) => path.map(() => result[key] ?? null);
  const chart = lineChart({
    title: 'Rating path over the run, with the four performance ratings',
    x,
    series: [
      { label: 'Rating path', values: path, color: '#111827', width: 3 },
      { label: 'Algorithm of 400', values: flat('algo400'), color: '#2563eb', dash: [6, 4], points: false },
      { label: 'Max likelihood', values: flat('maxLikelihood'), color: '#059669', dash: [2, 3], points: false },
      { label: 'Netzero', values: flat('netzero'), color: '#dc2626', dash: [10, 4], points: false },
      { label: 'Unordered netzero', values: flat('netzeroUnordered'), color: '#d97706', dash: [4, 2, 1, 2], points: false },
    ],
    xLabel: 'Game',
    yLabel: 'Rating',
    formatX: (value) => (value === 0 ? 'start' : `#${value}`),
  });
  output.append(chart.figure);
  output.append(
    table({
      caption: 'The run, game by game',
      id: 'performance-games',
      columns: [
        { label: 'Game', numeric: true },
        { label: 'Opponent', numeric: true },
        { label: 'Result' },
        { label: 'Weight', numeric: true },
        { label: 'Rating after', numeric: true },
      ],
      rows: games.map((game, index) =>
        h(
          'tr',
          {},
          h('td', { class: 'num' }, String(index + 1)),
          h('td', { class: 'num' }, String(game.opponent)),
          h('td', { class: `result ${game.result}` }, game.result),
          h('td', { class: 'num' }, String(game.weight ?? 1)),
          h('td', { class: 'num' }, formatNumber(after[index], 1)),
        ),
      ),
    }),
  );
  return chart;
}

/**
 * "Pick a run" from a ladder: a player's recent Elo or Glicko-2 matches, each
 * opponent taken as the rating their expected score implies
 * (before + 400·log10(1/expected − 1)), which is exact for Elo 1v1 and the
 * RD-discounted effective opponent for Glicko-2.
 */
async function playerRunPicker(gamesInput, signal, onLoaded) {
  let ladders = [];
  try {
    ({ ladders } = await api.ladders({ signal }));
  } catch {
    return null;
  }
  // Ladders whose history gives each game's expected score on Elo's 400-point scale (the systems endpoint says which).
  const eligible = ladders.filter((ladder) => systemInfo(ladder.system).dashboard.performanceRuns);
  if (eligible.length === 0) return null;
  const ladderSelect = h(
    'select',
    { id: 'run-ladder' },
    eligible.map((ladder) => h('option', { value: ladder.id }, ladder.id)),
  );
  const playerInput = h('input', { id: 'run-player', type: 'text', autocomplete: 'off', placeholder: 'player id' });
  const countInput = h('input', { id: 'run-count', type: 'number', min: '1', max: '200', value: '10', inputmode: 'numeric' });
  const status = h('p', { class: 'meta', 'aria-live': 'polite' });
  const load = h('button', { type: 'button', id: 'run-load' }, 'Load their games');
  load.addEventListener('click', async () => {
    const player = playerInput.value.trim();
    if (!player) {
      status.textContent = 'Enter a player id.';
      playerInput.focus();
      return;
    }
    try {
      const count = Math.min(200, Math.max(1, Number(countInput.value) || 10));
      // A few more than asked for, so voided matches (never counted, so no game of the run) can be skipped.
      const { history } = await api.history(ladderSelect.value, player, { limit: Math.min(500, count + 50) }, { signal });
      const lines = history
        .filter((entry) => !entry.void && typeof entry.terms?.expected === 'number' && entry.terms.expected > 0 && entry.terms.expected < 1)
        .slice(0, count)
        .reverse()
        .map((entry) => `${impliedOpponent(entry.before.rating, entry.terms.expected).toFixed(1)} ${entry.result}`);
      if (lines.length === 0) {
        status.textContent = `No rated games found for ${player}.`;
        return;
      }
      gamesInput.value = lines.join('\n');
      status.textContent = `Loaded ${lines.length} games of ${player}, oldest first, and rated them below.`;
      onLoaded();
    } catch (error) {
      status.textContent = errorMessage(error) ?? '';
    }
  });
  return h(
    'fieldset',
    { class: 'pick-run' },
    h('legend', {}, 'Or pick a player’s recent games'),
    h('div', { class: 'field' }, h('label', { for: 'run-ladder' }, 'Ladder'), ladderSelect),
    h('div', { class: 'field' }, h('label', { for: 'run-player' }, 'Player'), playerInput),
    h('div', { class: 'field narrow' }, h('label', { for: 'run-count' }, 'How many'), countInput),
    load,
    status,
  );
}

export function impliedOpponent(rating, expected) {
  return rating + 400 * Math.log10(1 / expected - 1);
}
