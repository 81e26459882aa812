import { api, enc } from '../api.js';
import { lineChart } from '../charts.js';
import { formatDate, formatNumber, formatRating, formatSigned, h, hashLink, table } from '../ui.js';
import { ladderHeader, placementText, playerHref, resultContent, resultMeaning } from './common.js';

const MATCHES_PER_PAGE = 20;
const HISTORY_PAGE = 100;
/** Enough for a season's chart without stalling a phone. */
const HISTORY_CAP = 2000;

/** Whole history, newest first, fetched page by page up to HISTORY_CAP. */
async function fetchHistory(ladderId, playerId, signal) {
  const all = [];
  for (let offset = 0; offset < HISTORY_CAP; offset += HISTORY_PAGE) {
    const { history } = await api.history(ladderId, playerId, { limit: HISTORY_PAGE, offset }, { signal });
    all.push(...history);
    if (history.length < HISTORY_PAGE) break;
  }
  return all;
}

export async function render(main, { params, query, signal }) {
  const [ladder, player, history] = await Promise.all([
    api.ladder(params.ladder, { signal }),
    api.player(params.ladder, params.player, { signal }),
    fetchHistory(params.ladder, params.player, signal),
  ]);
  const system = ladder.system;
  main.append(...ladderHeader(ladder, 'player', player.id));

  const stat = (label, value, key) => h('div', { dataset: { stat: key } }, h('dt', {}, label), h('dd', {}, value));
  main.append(
    h(
      'dl',
      { class: 'stats big', id: 'player-stats' },
      stat('Rating', formatRating(player.rating, system), 'rating'),
      player.rd !== undefined && player.rd !== null ? stat('RD', formatNumber(player.rd, 1), 'rd') : null,
      player.volatility !== undefined && player.volatility !== null ? stat('Volatility', formatNumber(player.volatility, 4), 'volatility') : null,
      stat('Rank', player.rank === null || player.rank === undefined ? '–' : `#${player.rank}`, 'rank'),
      stat('Percentile', player.percentile === null || player.percentile === undefined ? '–' : String(player.percentile), 'percentile'),
      stat('Division', player.division ?? '–', 'division'),
      stat('Placement', placementText(player.placementRemaining), 'placement'),
      stat('Matches', String(player.matches), 'matches'),
      stat('Last match', formatDate(player.lastAt), 'last'),
    ),
    h('p', {}, h('a', { href: hashLink(`/ladders/${enc(ladder.id)}`, { around: player.id }) }, `${player.id} on the leaderboard`)),
  );

  const cleanups = [];
  if (history.length > 0) {
    const chart = ratingChart(history, system, player.id);
    main.append(chart.figure);
    cleanups.push(chart.destroy);
  }

  main.append(h('h2', { id: 'matches-heading' }, 'Matches'), termsExplanation(system));
  if (history.length === 0) {
    main.append(h('p', {}, 'No rated matches yet.'));
    return () => cleanups.forEach((cleanup) => cleanup());
  }
  const pages = Math.ceil(history.length / MATCHES_PER_PAGE);
  const page = Math.min(pages, Math.max(1, Number.parseInt(query.page ?? '1', 10) || 1));
  const shown = history.slice((page - 1) * MATCHES_PER_PAGE, page * MATCHES_PER_PAGE);
  main.append(matchTable(shown, system, ladder.id, player.id, history.length - (page - 1) * MATCHES_PER_PAGE));
  if (pages > 1) {
    const base = `/ladders/${enc(ladder.id)}/players/${enc(player.id)}`;
    main.append(
      h(
        'nav',
        { class: 'pager', 'aria-label': 'Match list pages' },
        page > 1 ? h('a', { href: hashLink(base, { page: page - 1 }), rel: 'prev' }, '← Newer') : h('span', { class: 'disabled', 'aria-disabled': 'true' }, '← Newer'),
        h('span', {}, `Page ${page} of ${pages}`),
        page < pages ? h('a', { href: hashLink(base, { page: page + 1 }), rel: 'next' }, 'Older →') : h('span', { class: 'disabled', 'aria-disabled': 'true' }, 'Older →'),
      ),
    );
  }
  return () => cleanups.forEach((cleanup) => cleanup());
}

/** Rating after each match, oldest first, starting from the rating before the first one. */
function ratingChart(history, system, playerId) {
  const oldestFirst = [...history].reverse();
  const points = [oldestFirst[0].before, ...oldestFirst.map((entry) => entry.after)];
  const x = points.map((_point, index) => index);
  const rating = points.map((point) => point.rating);
  const series = [{ label: 'Rating', values: rating, color: '#2563eb' }];
  const bands = [];
  const hasRd = points.some((point) => typeof point.rd === 'number');
  if (hasRd) {
    // ±2 RD: the usual 95% interval of Glicko ratings.
    series.push(
      { label: '+2 RD', values: points.map((point) => (typeof point.rd === 'number' ? point.rating + 2 * point.rd : null)), color: 'rgba(37,99,235,0.45)', width: 1, points: false },
      { label: '−2 RD', values: points.map((point) => (typeof point.rd === 'number' ? point.rating - 2 * point.rd : null)), color: 'rgba(37,99,235,0.45)', width: 1, points: false },
    );
    bands.push({ upper: 1, lower: 2, fill: 'rgba(37,99,235,0.12)' });
  }
  return lineChart({
    title: hasRd ? `${playerId}: rating after each match, with the ±2 RD band` : `${playerId}: rating after each match`,
    x,
    series,
    bands,
    xLabel: 'Match',
    yLabel: system === 'teamrank' ? 'Rank' : 'Rating',
    formatX: (value) => (value === 0 ? 'start' : `#${value}`),
  });
}

function termsExplanation(system) {
  if (system === 'teamrank') {
    return h(
      'p',
      { class: 'explain' },
      'Each match stakes a twentieth of the rank. The change is R₀/20 × average-rank modifier × quitter modifier: ',
      'the average-rank modifier is above 1 when the other team was ranked higher (on a win) or lower (on a loss); ',
      'the quitter modifier is above 1 when your team played fewer seconds on a win, or the other team did on a loss. ',
      'A player who quits takes a loss whatever the team did (“win · quit: counted as a loss”).',
    );
  }
  return h(
    'p',
    { class: 'explain' },
    'Expected is the chance of winning the ratings gave before the match; score is what happened (1 win, ½ draw, 0 loss',
    system === 'wvw' ? ', or the score share transformed for World vs World' : '',
    '). Surprise = score − expected: the further from 0, the more the rating moved.',
    system === 'wvw' ? ' The rating follows the score share, not the placing: a world can top its match and still lose rating (“win · lost rating”) when its share was below what the ratings expected.' : '',
  );
}

function matchTable(entries, system, ladderId, playerId, firstNumber) {
  const teamrank = system === 'teamrank';
  const columns = [
    { label: '#', numeric: true },
    { label: 'When' },
    { label: 'Result' },
    { label: 'Teams' },
    { label: 'Before', numeric: true },
    { label: 'After', numeric: true },
    { label: 'Change', numeric: true },
    ...(teamrank
      ? [{ label: 'Outcome' }, { label: 'Avg-rank modifier', numeric: true }, { label: 'Quitter modifier', numeric: true }]
      : [{ label: 'Score', numeric: true }, { label: 'Expected', numeric: true }, { label: 'Surprise', numeric: true }]),
  ];
  const rows = entries.map((entry, index) => {
    const change = entry.after.rating - entry.before.rating;
    const terms = entry.terms ?? {};
    const meaning = resultMeaning(entry, system);
    return h(
      'tr',
      { dataset: { match: entry.matchId } },
      h('td', { class: 'num' }, String(firstNumber - index)),
      h('td', {}, formatDate(entry.at)),
      h('td', { class: `result ${meaning.counted}${meaning.note ? ' noted' : ''}` }, resultContent(entry.result, meaning.note)),
      h('td', { class: 'teams' }, teamsCell(entry, ladderId, playerId)),
      h('td', { class: 'num before' }, formatRating(entry.before.rating, system)),
      h('td', { class: 'num after' }, formatRating(entry.after.rating, system)),
      h('td', { class: `num change ${change > 0 ? 'up' : change < 0 ? 'down' : ''}` }, formatSigned(change, teamrank ? 2 : 1)),
      ...(teamrank
        ? [
            h('td', { class: 'outcome' }, String(terms.outcome ?? '–')),
            h('td', { class: 'num average-modifier' }, formatNumber(terms.averageModifier, 3)),
            h('td', { class: 'num quitter-modifier' }, formatNumber(terms.quitterModifier, 3)),
          ]
        : [
            h('td', { class: 'num score' }, formatNumber(terms.score, 3)),
            h('td', { class: 'num expected' }, formatNumber(terms.expected, 3)),
            h('td', { class: 'num surprise' }, formatSigned(terms.surprise, 3)),
          ]),
    );
  });
  return table({ caption: `${playerId}: matches, newest first, and the terms that moved the rating`, columns, rows, id: 'match-list', stack: true });
}

function teamsCell(entry, ladderId, playerId) {
  const teams = entry.teams ?? [];
  return teams.map((team, teamIndex) =>
    h(
      'span',
      { class: teamIndex === entry.team ? 'team own' : 'team' },
      teamIndex > 0 ? ' vs ' : '',
      team.map((member, memberIndex) => [
        memberIndex > 0 ? ', ' : '',
        member === playerId ? h('strong', {}, member) : h('a', { href: playerHref(ladderId, member) }, member),
      ]),
    ),
  );
}
