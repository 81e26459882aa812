import { api, enc } from '../api.js';
import { formatDate, h, systemLabel, table } from '../ui.js';
import { roundsOrMatchmaking } from './common.js';

export async function render(main, { signal }) {
  main.append(h('h1', { tabindex: '-1' }, 'Ladders'));
  const { ladders } = await api.ladders({ signal });
  if (ladders.length === 0) {
    main.append(h('p', {}, 'No ladders yet. Create one with POST /v1/ladders, or start the demo with npm start.'));
    return;
  }
  const cards = h(
    'ul',
    { class: 'cards', id: 'ladder-list' },
    ladders.map((ladder) => {
      const base = `#/ladders/${enc(ladder.id)}`;
      const extra = roundsOrMatchmaking(ladder).map((tab) => h('a', { href: `${base}/${tab.path}` }, tab.label));
      return h(
        'li',
        { class: 'card', dataset: { ladder: ladder.id } },
        h('h2', {}, h('a', { href: base }, ladder.id)),
        h('p', { class: 'meta' }, systemLabel(ladder.system), ladder.public ? '' : ' · private'),
        h(
          'dl',
          { class: 'stats' },
          h('div', {}, h('dt', {}, 'Players'), h('dd', { class: 'players' }, String(ladder.players))),
          h('div', {}, h('dt', {}, 'Matches'), h('dd', { class: 'matches' }, String(ladder.matches))),
          h('div', {}, h('dt', {}, 'Since'), h('dd', {}, formatDate(ladder.createdAt).slice(0, 10))),
        ),
        h('p', { class: 'links' }, h('a', { href: base }, 'Leaderboard'), ' · ', extra),
      );
    }),
  );
  main.append(cards);
  // The same numbers as a table for screen readers that navigate by table.
  main.append(
    h(
      'details',
      {},
      h('summary', {}, 'All ladders as a table'),
      table({
        caption: 'Ladders',
        columns: [{ label: 'Ladder' }, { label: 'System' }, { label: 'Players', numeric: true }, { label: 'Matches', numeric: true }, { label: 'Created' }],
        rows: ladders.map((ladder) =>
          h(
            'tr',
            {},
            h('td', {}, h('a', { href: `#/ladders/${enc(ladder.id)}` }, ladder.id)),
            h('td', {}, systemLabel(ladder.system)),
            h('td', { class: 'num' }, String(ladder.players)),
            h('td', { class: 'num' }, String(ladder.matches)),
            h('td', {}, formatDate(ladder.createdAt)),
          ),
        ),
      }),
    ),
  );
}
