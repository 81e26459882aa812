import { api, canOfferAdmin, enc } from '../api.js';
import { systemInfo } from '../systems.js';
import { formatDate, formatPercent, h, systemLabel } from '../ui.js';

/** Heading and tabs shared by every page of one ladder. */
export function ladderHeader(ladder, active, title) {
  const base = `#/ladders/${enc(ladder.id)}`;
  const tabs = [
    { key: 'leaderboard', label: 'Leaderboard', href: base },
    { key: 'matches', label: 'Matches', href: `${base}/matches` },
    ...roundsOrMatchmaking(ladder).map((tab) => ({ ...tab, href: `${base}/${tab.path}` })),
    // For admins only: shown while a key is saved that has not been found to lack the admin scope (and on the page itself).
    canOfferAdmin() || active === 'integrity' ? { key: 'integrity', label: 'Integrity', href: `${base}/integrity` } : null,
  ].filter(Boolean);
  return [
    h('p', { class: 'breadcrumb' }, h('a', { href: '#/ladders' }, 'Ladders'), ' / ', h('a', { href: base }, ladder.id)),
    h('h1', { tabindex: '-1' }, title ?? ladder.id),
    h('p', { class: 'meta' }, `${systemLabel(ladder.system)} · ${ladder.players} players · ${ladder.matches} matches`, ladder.public ? '' : ' · private'),
    h(
      'nav',
      { class: 'tabs', 'aria-label': `${ladder.id} pages` },
      h(
        'ul',
        {},
        tabs.map((tab) => h('li', {}, h('a', { href: tab.href, 'aria-current': tab.key === active ? 'page' : null }, tab.label))),
      ),
    ),
  ];
}

/**
 * The ladder's third tab: its rounds for a system rated in rounds (World vs
 * World), else matchmaking (a system rated in rounds groups its teams into
 * tiers instead of queueing players).
 */
export function roundsOrMatchmaking(ladder) {
  const system = systemInfo(ladder.system);
  return system.capabilities.rounds ? [{ key: 'rounds', label: system.label, path: 'rounds' }] : [{ key: 'matchmaking', label: 'Matchmaking', path: 'matchmaking' }];
}

export function playerHref(ladderId, playerId) {
  return `#/ladders/${enc(ladderId)}/players/${enc(playerId)}`;
}

/** "placed" or how many placement matches remain before the percentile shows. */
export function placementText(remaining) {
  if (!remaining) return 'placed';
  return `${remaining} placement ${remaining === 1 ? 'match' : 'matches'} left`;
}

/**
 * What a history entry's result meant for the rating, beyond the team's
 * placing in `result`: { counted, note }. A player who quit takes a loss
 * whatever the team did (team rank) and a walkover counts as a win; in World vs
 * World the top score can still lose rating (and a lower one gain it) because
 * the rating follows the score share against what the ratings expected.
 * `counted` is 'win', 'loss', 'draw' or 'mixed' (result and rating went
 * opposite ways); `note` is null when the result says it all.
 */
export function resultMeaning(entry, system) {
  const result = entry.result;
  const outcome = entry.terms?.outcome;
  const change = (entry.after?.rating ?? 0) - (entry.before?.rating ?? 0);
  if (outcome === 'quit') return { counted: 'loss', note: result === 'loss' ? 'quit' : 'quit: counted as a loss' };
  if (outcome === 'walkover') return { counted: 'win', note: result === 'win' ? 'walkover: the other team quit' : 'walkover: counted as a win' };
  const mixed = systemInfo(system).dashboard.mixedResult;
  if (mixed && result === 'win' && change < 0) return { counted: 'mixed', note: mixed.win };
  if (mixed && result === 'loss' && change > 0) return { counted: 'mixed', note: mixed.loss };
  return { counted: result, note: null };
}

/** A result cell's content: the result, then " · " and the note when there is one. */
export function resultContent(result, note) {
  return [h('span', { class: 'result-word' }, result), note ? h('span', { class: 'result-note' }, ` · ${note}`) : null];
}

/** "void: <reason>", or "void" when the reason is not known. */
export function voidLabel(details) {
  const reason = typeof details === 'object' && details !== null ? details.reason : '';
  return reason ? `void: ${reason}` : 'void';
}

/**
 * The `{ at, reason }` of each voided entry of a player's history, by match id.
 * History entries say only `void: true`; the reason is on the match in the
 * ladder's match list, which the cursor `before` reaches directly: the one
 * match before (the entry's seq + 1) is the entry's own. Voids are rare:
 * usually one small request.
 */
export async function voidDetails(ladderId, entries, signal) {
  const found = new Map();
  for (const entry of entries) {
    if (entry.void && typeof entry.void === 'object') found.set(entry.matchId, entry.void);
  }
  for (const entry of entries) {
    if (!entry.void || found.has(entry.matchId)) continue;
    const [match] = (await api.matches(ladderId, { limit: 1, before: entry.seq + 1 }, { signal })).matches;
    if (match && match.id === entry.matchId) found.set(entry.matchId, match.void ?? true);
  }
  return found;
}

/** Seasons for a picker: the current one (the API lists it last) first, then the closed ones, newest first. */
export function seasonsForPicker(seasons) {
  return [...seasons].reverse();
}

/** The current season: the last the API lists. */
export function currentSeason(seasons) {
  return seasons[seasons.length - 1];
}

/**
 * The season select: every season of the ladder, the current one first and
 * marked "(current)", closed ones with their closing date. `chosen` is the
 * season shown; `onChoose(name)` is called with the picked season's name.
 */
export function seasonPicker(seasons, chosen, onChoose) {
  const current = currentSeason(seasons);
  return h(
    'div',
    { class: 'field season-field' },
    h('label', { for: 'season' }, 'Season'),
    h(
      'select',
      { id: 'season', onchange: (event) => onChoose(event.target.value) },
      seasonsForPicker(seasons).map((season) =>
        h(
          'option',
          { value: season.name, selected: season.name === chosen.name, dataset: { current: season === current ? 'true' : 'false' } },
          season === current ? `${season.name} (current)` : `${season.name} (closed ${formatDate(season.closedAt).slice(0, 10)})`,
        ),
      ),
    ),
  );
}

/** The ladder's seasons, or a single current season when the service does not list them. */
export async function ladderSeasons(ladderId, signal) {
  try {
    const { seasons } = await api.seasons(ladderId, { signal });
    if (Array.isArray(seasons) && seasons.length > 0) return seasons;
  } catch (error) {
    if (error?.name === 'AbortError') throw error;
  }
  return [];
}

/** A rated match's result: the winning team, a draw, or the scores. */
export function matchResultText(teams) {
  const ranked = teams.map((team, index) => ({ index, rank: team.rank, score: team.score }));
  if (ranked.every((team) => team.rank !== undefined)) {
    const best = Math.min(...ranked.map((team) => team.rank));
    const winners = ranked.filter((team) => team.rank === best);
    return winners.length > 1 ? 'draw' : `team ${winners[0].index + 1} won`;
  }
  if (ranked.every((team) => team.score !== undefined)) return ranked.map((team) => team.score).join(' – ');
  return '–';
}

/** "squad-03 quit: counted as a loss" for the players who quit, or null. */
export function quitNote(teams) {
  const quitters = teams.flatMap((team) => team.quitters ?? []);
  if (quitters.length === 0) return null;
  return `${quitters.join(', ')} quit: counted as ${quitters.length === 1 ? 'a loss' : 'losses'}`;
}

/**
 * The cells of one row of a match list (GET /v1/ladders/{id}/matches): when,
 * teams, the win chance predicted before rating, the result. A voided match's
 * result reads "void: <reason>" (the row is struck through by its `void` class).
 */
export function ratedMatchCells(ladderId, match) {
  const voided = match.void !== undefined && match.void !== null && match.void !== false;
  const note = voided ? null : quitNote(match.teams);
  return [
    h('td', { class: 'when' }, formatDate(match.at)),
    h(
      'td',
      { class: 'teams' },
      match.teams.map((team, index) => [
        index > 0 ? ' vs ' : '',
        team.players.map((member, position) => {
          const id = typeof member === 'string' ? member : member.id;
          return [position > 0 ? ', ' : '', h('a', { href: playerHref(ladderId, id) }, id)];
        }),
      ]),
    ),
    h('td', { class: 'num win-probability' }, (match.winProbability ?? []).map((p) => formatPercent(p, 0)).join(' / ') || '–'),
    voided
      ? h('td', { class: 'result void-label', title: match.void?.at ? `voided ${formatDate(match.void.at)}` : null }, voidLabel(match.void))
      : h('td', { class: note ? 'result noted' : 'result' }, resultContent(matchResultText(match.teams), note)),
  ];
}
