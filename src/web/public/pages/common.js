import { enc } from '../api.js';
import { h, systemLabel } from '../ui.js';

/** Heading and tabs shared by every page of one ladder. */
export function ladderHeader(ladder, active, title) {
  const base = `#/ladders/${enc(ladder.id)}`;
  const tabs = [
    { key: 'leaderboard', label: 'Leaderboard', href: base },
    ladder.system === 'wvw' ? { key: 'wvw', label: 'World vs World', href: `${base}/wvw` } : null,
    ladder.system !== 'wvw' ? { key: 'matchmaking', label: 'Matchmaking', href: `${base}/matchmaking` } : null,
  ].filter(Boolean);
  return [
    h('p', { class: 'breadcrumb' }, h('a', { href: '#/ladders' }, 'Ladders'), ' / ', h('a', { href: base }, ladder.id)),
    h('h1', { tabindex: '-1' }, title ?? ladder.id),
    h(
      'p',
      { class: 'meta' },
      `${systemLabel(ladder.system)} · ${ladder.players} players · ${ladder.matches} matches`,
      ladder.public ? '' : ' · private',
    ),
    h(
      'nav',
      { class: 'tabs', 'aria-label': `${ladder.id} pages` },
      h('ul', {}, tabs.map((tab) => h('li', {}, h('a', { href: tab.href, 'aria-current': tab.key === active ? 'page' : null }, tab.label)))),
    ),
  ];
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
  if (system === 'wvw' && result === 'win' && change < 0) return { counted: 'mixed', note: 'lost rating: score share below expected' };
  if (system === 'wvw' && result === 'loss' && change > 0) return { counted: 'mixed', note: 'gained rating: score share above expected' };
  return { counted: result, note: null };
}

/** A result cell's content: the result, then " · " and the note when there is one. */
export function resultContent(result, note) {
  return [h('span', { class: 'result-word' }, result), note ? h('span', { class: 'result-note' }, ` · ${note}`) : null];
}
