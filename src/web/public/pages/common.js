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
