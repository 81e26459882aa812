import { api, enc } from '../api.js';
import { formatNumber, formatRating, h, hashLink, table } from '../ui.js';
import { ladderHeader, placementText, playerHref } from './common.js';

const PAGE_SIZES = [10, 25, 50, 100];
const DEFAULT_LIMIT = 25;

export async function render(main, { params, query, signal }) {
  const ladder = await api.ladder(params.ladder, { signal });
  main.append(...ladderHeader(ladder, 'leaderboard', `${ladder.id} leaderboard`));

  const limit = PAGE_SIZES.includes(Number(query.limit)) ? Number(query.limit) : DEFAULT_LIMIT;
  const offset = Math.max(0, Number.parseInt(query.offset ?? '0', 10) || 0);
  const search = query.search ?? '';
  const around = query.around ?? '';
  const path = `/ladders/${enc(ladder.id)}`;
  const link = (changes) => hashLink(path, { limit: limit === DEFAULT_LIMIT ? '' : limit, search, around, offset, ...changes });

  main.append(
    h(
      'div',
      { class: 'toolbar' },
      h(
        'form',
        { role: 'search', id: 'search-form', onsubmit: (event) => submit(event, (value) => link({ search: value, around: '', offset: '' })) },
        h('label', { for: 'search' }, 'Search players'),
        h('div', { class: 'input-row' }, h('input', { id: 'search', name: 'value', type: 'search', value: search, autocomplete: 'off', placeholder: 'player id' }), h('button', { type: 'submit' }, 'Search')),
      ),
      h(
        'form',
        { id: 'around-form', onsubmit: (event) => submit(event, (value) => link({ around: value, search: '', offset: '' })) },
        h('label', { for: 'around' }, 'Around me'),
        h('div', { class: 'input-row' }, h('input', { id: 'around', name: 'value', type: 'text', value: around, autocomplete: 'off', placeholder: 'your player id' }), h('button', { type: 'submit' }, 'Show')),
      ),
      h(
        'div',
        { class: 'field' },
        h('label', { for: 'page-size' }, 'Per page'),
        h(
          'select',
          { id: 'page-size', onchange: (event) => (location.hash = link({ limit: event.target.value, offset: '' })) },
          PAGE_SIZES.map((size) => h('option', { value: size, selected: size === limit }, String(size))),
        ),
      ),
    ),
  );

  const board = await api.leaderboard(ladder.id, { limit, offset: around ? '' : offset, search, around }, { signal });
  const first = board.entries.length ? board.offset + 1 : 0;
  const last = board.offset + board.entries.length;
  const filters = [search ? `matching “${search}”` : '', around ? `around ${around}` : ''].filter(Boolean).join(' ');
  main.append(
    h('p', { id: 'leaderboard-status', 'aria-live': 'polite' }, board.total === 0 ? `No players ${filters}`.trim() + '.' : `Showing ${first}–${last} of ${board.total} players ${filters}`.trim() + '.'),
  );
  if (search || around) main.append(h('p', {}, h('a', { href: hashLink(path) }, 'Show the whole leaderboard')));

  const hasRd = board.entries.some((entry) => entry.rd !== undefined && entry.rd !== null);
  const columns = [
    { label: 'Rank', numeric: true },
    { label: 'Player' },
    { label: 'Rating', numeric: true },
    hasRd ? { label: 'RD', numeric: true, optional: true } : null,
    { label: 'Matches', numeric: true, optional: true },
    { label: 'Percentile', numeric: true },
    { label: 'Division' },
    { label: 'Placement' },
  ].filter(Boolean);
  const rows = board.entries.map((entry) =>
    h(
      'tr',
      { class: around && entry.id === around ? 'me' : null, 'aria-current': around && entry.id === around ? 'true' : null, dataset: { player: entry.id } },
      h('td', { class: 'num rank' }, entry.rank === null || entry.rank === undefined ? '–' : String(entry.rank)),
      h('td', { class: 'player' }, h('a', { href: playerHref(ladder.id, entry.id) }, entry.id)),
      h('td', { class: 'num rating' }, formatRating(entry.rating, ladder.system)),
      hasRd ? h('td', { class: 'num rd' }, formatNumber(entry.rd, 1)) : null,
      h('td', { class: 'num matches' }, String(entry.matches)),
      h('td', { class: 'num percentile' }, entry.percentile === null || entry.percentile === undefined ? '–' : String(entry.percentile)),
      h('td', { class: 'division' }, entry.division ?? '–'),
      h('td', { class: 'placement' }, placementText(entry.placementRemaining)),
    ),
  );
  main.append(table({ caption: `${ladder.id} standings`, columns, rows, id: 'leaderboard' }));

  const pages = Math.max(1, Math.ceil(board.total / limit));
  const page = Math.floor(board.offset / limit) + 1;
  const previousOffset = Math.max(0, board.offset - limit);
  const nextOffset = board.offset + board.entries.length;
  main.append(
    h(
      'nav',
      { class: 'pager', 'aria-label': 'Leaderboard pages' },
      board.offset > 0
        ? h('a', { href: link({ offset: previousOffset, around: '' }), rel: 'prev', id: 'previous-page' }, '← Previous')
        : h('span', { class: 'disabled', 'aria-disabled': 'true' }, '← Previous'),
      h('span', { id: 'page-number' }, `Page ${page} of ${pages}`),
      nextOffset < board.total
        ? h('a', { href: link({ offset: nextOffset, around: '' }), rel: 'next', id: 'next-page' }, 'Next →')
        : h('span', { class: 'disabled', 'aria-disabled': 'true' }, 'Next →'),
    ),
  );
}

function submit(event, hrefFor) {
  event.preventDefault();
  const value = new FormData(event.target).get('value').toString().trim();
  location.hash = hrefFor(value);
}
