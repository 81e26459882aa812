import { ApiError, api, enc } from '../api.js';
import { lineChart } from '../charts.js';
import { systemInfo } from '../systems.js';
import { formatDate, formatNumber, formatRating, formatSigned, h, hashLink, ratingDecimals, table } from '../ui.js';
import { currentSeason, ladderHeader, ladderSeasons, placementText, playerHref, resultContent, resultMeaning, seasonPicker, voidDetails, voidLabel } from './common.js';
import { canVoid, voidButton } from './void.js';

const MATCHES_PER_PAGE = 20;
const HISTORY_PAGE = 100;
/** Enough for a season's chart without stalling a phone. */
const HISTORY_CAP = 2000;

/**
 * Whole history, newest first, fetched page by page up to HISTORY_CAP. Each
 * page starts before the last entry of the one before (the `before` cursor):
 * the service walks a player's history entry by entry, so an offset would
 * walk again every entry it skips.
 */
async function fetchHistory(ladderId, playerId, signal) {
  const all = [];
  while (all.length < HISTORY_CAP) {
    const query = { limit: HISTORY_PAGE, ...(all.length > 0 ? { before: all[all.length - 1].seq } : {}) };
    const { history } = await api.history(ladderId, playerId, query, { signal });
    all.push(...history);
    if (history.length < HISTORY_PAGE) break;
  }
  return all;
}

export async function render(main, { params, query, signal }) {
  const [ladder, player, history, seasons] = await Promise.all([
    api.ladder(params.ladder, { signal }),
    api.player(params.ladder, params.player, { signal }),
    fetchHistory(params.ladder, params.player, signal),
    ladderSeasons(params.ladder, signal),
  ]);
  const system = ladder.system;
  main.append(...ladderHeader(ladder, 'player', player.id));
  const voids = await voidDetails(ladder.id, history, signal);
  const base = `/ladders/${enc(ladder.id)}/players/${enc(player.id)}`;

  // A closed season picked: the player's final standing in it instead of today's.
  const current = currentSeason(seasons);
  const season = seasons.find((candidate) => candidate.name === query.season && candidate !== current) ?? current;
  const closed = season !== undefined && season !== current;
  if (seasons.length > 0) {
    main.append(
      h(
        'form',
        { class: 'toolbar', id: 'season-form', onsubmit: (event) => event.preventDefault() },
        seasonPicker(seasons, season, (name) => (location.hash = hashLink(base, { season: name === current.name ? '' : name }))),
        h(
          'p',
          { class: 'meta' },
          closed ? `Final standing when season ${season.name} closed; the chart and matches below cover every season.` : `Standing in the current season, ${current.name}.`,
        ),
      ),
    );
  }

  const counted = history.filter((entry) => !entry.void);
  const stat = (label, value, key) => h('div', { dataset: { stat: key } }, h('dt', {}, label), h('dd', {}, value));
  if (closed) main.append(...(await seasonStanding(ladder, player.id, season, signal)));
  else {
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
        stat(history.length >= HISTORY_CAP ? `Record (last ${HISTORY_CAP})` : 'Record', recordText(counted, system), 'record'),
        stat('Last match', formatDate(player.lastAt), 'last'),
      ),
      h('p', {}, h('a', { href: hashLink(`/ladders/${enc(ladder.id)}`, { around: player.id }) }, `${player.id} on the leaderboard`)),
    );
  }

  const cleanups = [];
  if (counted.length > 0) {
    const chart = ratingChart(counted, player.id);
    main.append(chart.figure);
    cleanups.push(chart.destroy);
  }

  main.append(h('h2', { id: 'matches-heading' }, 'Matches'), termsExplanation(system));
  if (history.length === 0) {
    main.append(h('p', {}, 'No rated matches yet.'));
    return () => cleanups.forEach((cleanup) => cleanup());
  }
  if (counted.length < history.length) {
    const voided = history.length - counted.length;
    main.append(
      h(
        'p',
        { class: 'meta', id: 'void-count' },
        `${voided} voided ${voided === 1 ? 'match is' : 'matches are'} struck through: ${voided === 1 ? 'it counts' : 'they count'} in no figure on this page, and the chart skips ${voided === 1 ? 'it' : 'them'}.`,
      ),
    );
  }
  const pages = Math.ceil(history.length / MATCHES_PER_PAGE);
  const page = Math.min(pages, Math.max(1, Number.parseInt(query.page ?? '1', 10) || 1));
  const shown = history.slice((page - 1) * MATCHES_PER_PAGE, page * MATCHES_PER_PAGE);
  main.append(matchTable(shown, { ladder, playerId: player.id, numbers: matchNumbers(history), voids }));
  if (pages > 1) {
    const seasonQuery = closed ? season.name : '';
    main.append(
      h(
        'nav',
        { class: 'pager', 'aria-label': 'Match list pages' },
        page > 1
          ? h('a', { href: hashLink(base, { page: page - 1, season: seasonQuery }), rel: 'prev' }, '← Newer')
          : h('span', { class: 'disabled', 'aria-disabled': 'true' }, '← Newer'),
        h('span', {}, `Page ${page} of ${pages}`),
        page < pages
          ? h('a', { href: hashLink(base, { page: page + 1, season: seasonQuery }), rel: 'next' }, 'Older →')
          : h('span', { class: 'disabled', 'aria-disabled': 'true' }, 'Older →'),
      ),
    );
  }
  return () => cleanups.forEach((cleanup) => cleanup());
}

/** The player's final standing in a closed season (frozen by the service), or why there is none: nodes for main.append(...). */
async function seasonStanding(ladder, playerId, season, signal) {
  let standing;
  try {
    standing = await api.seasonPlayer(ladder.id, season.name, playerId, { signal });
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) {
      return [h('p', { class: 'notice', id: 'season-standing' }, `${playerId} has no standing in season ${season.name}: no match of theirs counted in it.`)];
    }
    throw error;
  }
  const stat = (label, value, key) => h('div', { dataset: { stat: key } }, h('dt', {}, label), h('dd', {}, value));
  const leaderboardOffset = Math.floor((standing.position - 1) / 25) * 25;
  return [
    h('h2', { id: 'season-heading' }, `Season ${season.name}: final standing`),
    h(
      'dl',
      { class: 'stats big', id: 'season-standing', 'aria-labelledby': 'season-heading' },
      stat('Position', String(standing.position), 'position'),
      stat('Rank', standing.rank === null || standing.rank === undefined ? '–' : `#${standing.rank}`, 'rank'),
      stat('Rating', formatRating(standing.rating, ladder.system), 'rating'),
      standing.rd !== undefined && standing.rd !== null ? stat('RD', formatNumber(standing.rd, 1), 'rd') : null,
      stat('Percentile', standing.percentile === null || standing.percentile === undefined ? '–' : String(standing.percentile), 'percentile'),
      stat('Division', standing.division ?? '–', 'division'),
      stat('Matches', String(standing.matches), 'matches'),
      stat('Closed', formatDate(season.closedAt), 'closed'),
    ),
    h(
      'p',
      {},
      h(
        'a',
        { href: hashLink(`/ladders/${enc(ladder.id)}`, { season: season.name, offset: leaderboardOffset || '' }) },
        `${playerId} in the final standings of season ${season.name}`,
      ),
    ),
  ];
}

/** "12 W · 7 L · 1 D" over the matches that count, a quit counted as the loss it was rated as. */
function recordText(counted, system) {
  const tally = { win: 0, loss: 0, draw: 0 };
  for (const entry of counted) {
    const meaning = resultMeaning(entry, system);
    const result = meaning.counted === 'mixed' ? entry.result : meaning.counted;
    if (result in tally) tally[result] += 1;
  }
  return `${tally.win} W · ${tally.loss} L · ${tally.draw} D`;
}

/** Match number of each counted entry (oldest is 1), by match id; voided entries get none. */
function matchNumbers(history) {
  const numbers = new Map();
  let number = 0;
  for (let index = history.length - 1; index >= 0; index -= 1) {
    if (!history[index].void) numbers.set(history[index].matchId, (number += 1));
  }
  return numbers;
}

/**
 * Rating after each counted match, oldest first, starting from the rating
 * before the first one. Voided matches are left out: the service rated every
 * later match again without them, so a void is no step of the rating.
 */
function ratingChart(counted, playerId) {
  const oldestFirst = [...counted].reverse();
  const points = [oldestFirst[0].before, ...oldestFirst.map((entry) => entry.after)];
  const x = points.map((_point, index) => index);
  const rating = points.map((point) => point.rating);
  const series = [{ label: 'Rating', values: rating, color: '#2563eb' }];
  const bands = [];
  const hasRd = points.some((point) => typeof point.rd === 'number');
  if (hasRd) {
    // ±2 RD: the usual 95% interval of Glicko ratings.
    series.push(
      {
        label: '+2 RD',
        values: points.map((point) => (typeof point.rd === 'number' ? point.rating + 2 * point.rd : null)),
        color: 'rgba(37,99,235,0.45)',
        width: 1,
        points: false,
      },
      {
        label: '−2 RD',
        values: points.map((point) => (typeof point.rd === 'number' ? point.rating - 2 * point.rd : null)),
        color: 'rgba(37,99,235,0.45)',
        width: 1,
        points: false,
      },
    );
    bands.push({ upper: 1, lower: 2, fill: 'rgba(37,99,235,0.12)' });
  }
  return lineChart({
    title: hasRd ? `${playerId}: rating after each match, with the ±2 RD band` : `${playerId}: rating after each match`,
    x,
    series,
    bands,
    xLabel: 'Match',
    yLabel: 'Rating',
    formatX: (value) => (value === 0 ? 'start' : `#${value}`),
  });
}

/** What the terms columns mean, from the systems endpoint. */
function termsExplanation(system) {
  const text = systemInfo(system).dashboard.explanation;
  return text ? h('p', { class: 'explain' }, text) : '';
}

/** A terms cell: its value formatted as the system's column says. */
function termCell(column, value) {
  const className = `num ${column.key.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`)}`;
  if (column.format === 'text') return h('td', { class: className.replace(/^num /, '') }, value === undefined || value === null ? '–' : String(value));
  return h('td', { class: className }, column.format === 'signed' ? formatSigned(value, column.digits ?? 2) : formatNumber(value, column.digits ?? 2));
}

function matchTable(entries, { ladder, playerId, numbers, voids }) {
  const system = ladder.system;
  const ladderId = ladder.id;
  const { terms: termColumns } = systemInfo(system).dashboard;
  const decimals = ratingDecimals(system);
  const voidable = canVoid(ladder);
  const columns = [
    { label: '#', numeric: true },
    { label: 'When' },
    { label: 'Result' },
    { label: 'Teams' },
    { label: 'Before', numeric: true },
    { label: 'After', numeric: true },
    { label: 'Change', numeric: true },
    ...termColumns.map((column) => ({ label: column.label, numeric: column.format !== 'text' })),
    voidable ? { label: 'Action' } : null,
  ].filter(Boolean);
  const rows = entries.map((entry) => {
    const change = entry.after.rating - entry.before.rating;
    const terms = entry.terms ?? {};
    const meaning = resultMeaning(entry, system);
    const voided = Boolean(entry.void);
    return h(
      'tr',
      { class: voided ? 'void' : null, dataset: { match: entry.matchId } },
      h('td', { class: 'num number' }, voided ? '–' : String(numbers.get(entry.matchId) ?? '–')),
      h('td', { class: 'when' }, formatDate(entry.at)),
      voided
        ? h('td', { class: 'result void-label' }, voidLabel(voids.get(entry.matchId)))
        : h('td', { class: `result ${meaning.counted}${meaning.note ? ' noted' : ''}` }, resultContent(entry.result, meaning.note)),
      h('td', { class: 'teams' }, teamsCell(entry, ladderId, playerId)),
      h('td', { class: 'num before' }, formatRating(entry.before.rating, system)),
      h('td', { class: 'num after' }, formatRating(entry.after.rating, system)),
      h('td', { class: `num change ${voided ? '' : change > 0 ? 'up' : change < 0 ? 'down' : ''}` }, formatSigned(change, decimals)),
      ...termColumns.map((column) => termCell(column, terms[column.key])),
      voidable ? h('td', { class: 'action' }, voided ? '' : voidButton(ladder, entry.matchId)) : null,
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
      team.map((member, memberIndex) => [memberIndex > 0 ? ', ' : '', member === playerId ? h('strong', {}, member) : h('a', { href: playerHref(ladderId, member) }, member)]),
    ),
  );
}
