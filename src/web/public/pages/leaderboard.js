import { api, enc } from '../api.js';
import { formatDate, formatNumber, formatRating, h, hashLink, table } from '../ui.js';
import { currentSeason, ladderHeader, ladderSeasons, placementText, playerHref, seasonPicker } from './common.js';

const PAGE_SIZES = [10, 25, 50, 100];
const DEFAULT_LIMIT = 25;

export async function render(main, { params, query, signal }) {
  const [ladder, seasons] = await Promise.all([api.ladder(params.ladder, { signal }), ladderSeasons(params.ladder, signal)]);
  main.append(...ladderHeader(ladder, 'leaderboard', `${ladder.id} leaderboard`));

  // `?season=<name>` of a closed season shows its frozen final standings; the current season is the live board.
  const current = currentSeason(seasons);
  const picked = query.season ? seasons.find((season) => season.name === query.season) : current;
  const closed = picked !== undefined && picked !== current ? picked : undefined;
  const limit = PAGE_SIZES.includes(Number(query.limit)) ? Number(query.limit) : DEFAULT_LIMIT;
  const offset = Math.max(0, Number.parseInt(query.offset ?? '0', 10) || 0);
  const search = closed ? '' : (query.search ?? '');
  const around = closed ? '' : (query.around ?? '');
  const path = `/ladders/${enc(ladder.id)}`;
  const link = (changes) => hashLink(path, { season: closed?.name ?? '', limit: limit === DEFAULT_LIMIT ? '' : limit, search, around, offset, ...changes });

  const picker =
    seasons.length > 0 && current
      ? seasonPicker(
          seasons,
          picked ?? current,
          (name) => (location.hash = hashLink(path, { season: name === current.name ? '' : name, limit: limit === DEFAULT_LIMIT ? '' : limit })),
        )
      : null;
  const pageSize = h(
    'div',
    { class: 'field' },
    h('label', { for: 'page-size' }, 'Per page'),
    h(
      'select',
      { id: 'page-size', onchange: (event) => (location.hash = link({ limit: event.target.value, offset: '' })) },
      PAGE_SIZES.map((size) => h('option', { value: size, selected: size === limit }, String(size))),
    ),
  );
  if (query.season && !picked) {
    main.append(
      h('div', { class: 'toolbar' }, picker),
      h(
        'p',
        { class: 'error', role: 'alert', id: 'leaderboard-status' },
        `No season “${query.season}” in ${ladder.id}. `,
        h('a', { href: hashLink(path) }, 'The current standings'),
      ),
    );
    return;
  }
  if (closed) {
    main.append(h('div', { class: 'toolbar' }, picker, pageSize));
    await renderClosedSeason(main, { ladder, season: closed, limit, offset, link, signal });
    return;
  }

  main.append(
    h(
      'div',
      { class: 'toolbar' },
      picker,
      h(
        'form',
        { role: 'search', id: 'search-form', onsubmit: (event) => submit(event, (value) => link({ search: value, around: '', offset: '' })) },
        h('label', { for: 'search' }, 'Search players'),
        h(
          'div',
          { class: 'input-row' },
          h('input', { id: 'search', name: 'value', type: 'search', value: search, autocomplete: 'off', placeholder: 'player id' }),
          h('button', { type: 'submit' }, 'Search'),
        ),
      ),
      h(
        'form',
        { id: 'around-form', onsubmit: (event) => submit(event, (value) => link({ around: value, search: '', offset: '' })) },
        h('label', { for: 'around' }, 'Around me'),
        h(
          'div',
          { class: 'input-row' },
          h('input', { id: 'around', name: 'value', type: 'text', value: around, autocomplete: 'off', placeholder: 'your player id' }),
          h('button', { type: 'submit' }, 'Show'),
        ),
      ),
      pageSize,
    ),
  );

  const board = await api.leaderboard(ladder.id, { limit, offset: around ? '' : offset, search, around }, { signal });
  // The offset the API answered: around-me centres the page on the player, so it is rarely a multiple of the page size.
  const shownOffset = Number.isInteger(board.offset) ? board.offset : around ? 0 : offset;
  const count = board.entries.length;
  const { total, exact } = await countOf(board, { ladder: ladder.id, limit, offset: shownOffset, search, signal });
  const first = shownOffset + 1;
  const last = shownOffset + count;
  const filters = [search ? `matching “${search}”` : '', around ? `around ${around}` : ''].filter(Boolean).join(' ');
  const players = (n) => `${n} ${n === 1 ? 'player' : 'players'}`;
  const lastPageOffset = total > 0 ? Math.floor((total - 1) / limit) * limit : 0;
  const status = h('p', { id: 'leaderboard-status', 'aria-live': 'polite' });
  const earlier = seasons.length > 1 ? seasons[seasons.length - 2] : undefined;
  if (count === 0 && shownOffset === 0 && !filters && earlier) {
    // A season just opened: nobody has played in it yet.
    status.append(
      `No ranked players in season ${current.name} yet. `,
      h('a', { href: hashLink(path, { season: earlier.name }), id: 'previous-season' }, `The final standings of ${earlier.name}`),
      '.',
    );
  } else if (count === 0 && shownOffset === 0) {
    status.append(filters ? `No players ${filters}.` : 'No ranked players yet.');
  } else if (count === 0) {
    // An offset past the end (an old link, or a list that shrank): say so and offer a way back.
    status.append(
      'No entries on this page: ',
      total > 0 ? `the list has ${players(total)} ${filters}`.trim() + ', ' : `nothing ${filters}`.trim() + ' this far down, ',
      h('a', { href: link({ offset: total > 0 ? lastPageOffset : '', around: '' }), id: 'back-to-list' }, total > 0 ? 'back to the last page' : 'back to the first page'),
      '.',
    );
  } else {
    status.append(`Showing ${first}–${last} of ${exact ? '' : 'more than '}${players(exact ? total : last)} ${filters}`.trim() + '.');
  }
  main.append(status);
  if (search || around) main.append(h('p', {}, h('a', { href: hashLink(path) }, 'Show the whole leaderboard')));

  const hasRd = board.entries.some((entry) => entry.rd !== undefined && entry.rd !== null);
  const columns = [
    { label: 'Rank', numeric: true },
    { label: 'Player' },
    { label: 'Rating', numeric: true },
    hasRd ? { label: 'RD', numeric: true, optional: true } : null,
    { label: 'Matches', numeric: true, optional: true },
    // On a phone the rank, player, rating, percentile and division fit the screen; RD, matches and placement go.
    { label: 'Percentile', short: 'Pctl', numeric: true },
    { label: 'Division' },
    { label: 'Placement', optional: true },
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
  if (count > 0) main.append(table({ caption: `${ladder.id} standings`, columns, rows, id: 'leaderboard' }));

  main.append(pager({ shownOffset, count, total, exact, limit, link }));
}

/**
 * Previous, "Page n of m" and Next. Pages are counted from the offset shown:
 * the pages before it, this one, and the pages after it.
 */
function pager({ shownOffset, count, total, exact, limit, link }) {
  const lastPageOffset = total > 0 ? Math.floor((total - 1) / limit) * limit : 0;
  const pagesBefore = Math.ceil(shownOffset / limit);
  const pagesFromHere = Math.max(1, Math.ceil((total - shownOffset) / limit));
  const previousOffset = count === 0 ? lastPageOffset : Math.max(0, shownOffset - limit);
  const nextOffset = shownOffset + count;
  const hasNext = count > 0 && (nextOffset < total || !exact);
  const position =
    count === 0 && shownOffset > 0
      ? `Past the last page${total > 0 ? ` (${Math.ceil(total / limit)} in all)` : ''}`
      : `Page ${pagesBefore + 1} of ${exact ? pagesBefore + pagesFromHere : `at least ${pagesBefore + 2}`}`;
  return h(
    'nav',
    { class: 'pager', 'aria-label': 'Leaderboard pages' },
    shownOffset > 0
      ? h('a', { href: link({ offset: previousOffset || '', around: '' }), rel: 'prev', id: 'previous-page' }, count === 0 ? '← Last page' : '← Previous')
      : h('span', { class: 'disabled', 'aria-disabled': 'true' }, '← Previous'),
    h('span', { id: 'page-number' }, position),
    hasNext
      ? h('a', { href: link({ offset: nextOffset, around: '' }), rel: 'next', id: 'next-page' }, 'Next →')
      : h('span', { class: 'disabled', 'aria-disabled': 'true' }, 'Next →'),
  );
}

/**
 * A closed season's final standings, frozen by the service when the next
 * season opened: every player who played in it, ranked ones first, paged like
 * the live board (search and around-me are the live board's).
 */
async function renderClosedSeason(main, { ladder, season, limit, offset, link, signal }) {
  const board = await api.seasonLeaderboard(ladder.id, season.name, { limit, offset }, { signal });
  const shownOffset = Number.isInteger(board.offset) ? board.offset : offset;
  const count = board.entries.length;
  const total = Number.isFinite(board.total) ? board.total : shownOffset + count;
  const players = (n) => `${n} ${n === 1 ? 'player' : 'players'}`;
  const lastPageOffset = total > 0 ? Math.floor((total - 1) / limit) * limit : 0;
  const status = h('p', { id: 'leaderboard-status', 'aria-live': 'polite' });
  const closedOn = `closed ${formatDate(season.closedAt)}`;
  if (count === 0 && shownOffset === 0) status.append(`Season ${season.name} (${closedOn}) ended with no players.`);
  else if (count === 0) {
    status.append(
      `No entries on this page: season ${season.name} ended with ${players(total)}, `,
      h('a', { href: link({ offset: lastPageOffset || '' }), id: 'back-to-list' }, 'back to the last page'),
      '.',
    );
  } else status.append(`Final standings of season ${season.name} (${closedOn}): showing ${shownOffset + 1}–${shownOffset + count} of ${players(total)}.`);
  main.append(status);

  const hasRd = board.entries.some((entry) => entry.rd !== undefined && entry.rd !== null);
  const columns = [
    { label: 'Position', short: 'Pos', numeric: true },
    { label: 'Player' },
    { label: 'Rank', numeric: true, optional: true },
    { label: 'Rating', numeric: true },
    hasRd ? { label: 'RD', numeric: true, optional: true } : null,
    { label: 'Matches', numeric: true, optional: true },
    { label: 'Percentile', short: 'Pctl', numeric: true },
    { label: 'Division' },
  ].filter(Boolean);
  const rows = board.entries.map((entry) =>
    h(
      'tr',
      { dataset: { player: entry.id } },
      h('td', { class: 'num position' }, String(entry.position)),
      h('td', { class: 'player' }, h('a', { href: hashLink(playerHref(ladder.id, entry.id).slice(1), { season: season.name }) }, entry.id)),
      h('td', { class: 'num rank' }, entry.rank === null || entry.rank === undefined ? '–' : String(entry.rank)),
      h('td', { class: 'num rating' }, formatRating(entry.rating, ladder.system)),
      hasRd ? h('td', { class: 'num rd' }, formatNumber(entry.rd, 1)) : null,
      h('td', { class: 'num matches' }, String(entry.matches)),
      h('td', { class: 'num percentile' }, entry.percentile === null || entry.percentile === undefined ? '–' : String(entry.percentile)),
      h('td', { class: 'division' }, entry.division ?? '–'),
    ),
  );
  if (count > 0) main.append(table({ caption: `${ladder.id}: final standings of season ${season.name}`, columns, rows, id: 'leaderboard' }));
  main.append(pager({ shownOffset, count, total, exact: true, limit, link }));
}

/**
 * How many entries the list has, and whether that count is exact. The API's
 * `total` counts every ranked player, or every player matching a search. Older
 * services answered a search with the length of the page as its total, which
 * shows in the answer: a short page ends the list whatever the total says,
 * and only a full page whose total is its own length (an older service, or
 * exactly one page of matches) needs a one-entry look ahead.
 */
async function countOf(board, { ladder, limit, offset, search, signal }) {
  const count = board.entries.length;
  const total = Number.isFinite(board.total) ? board.total : 0;
  if (!search || count === 0) return { total, exact: true };
  if (count < limit) return { total: offset + count, exact: true };
  if (total !== count || total > offset + count) return { total: Math.max(total, offset + count), exact: true };
  const ahead = await api.leaderboard(ladder, { limit: 1, offset: offset + count, search }, { signal });
  return ahead.entries.length === 0 ? { total: offset + count, exact: true } : { total: offset + count + 1, exact: false };
}

function submit(event, hrefFor) {
  event.preventDefault();
  const value = new FormData(event.target).get('value').toString().trim();
  location.hash = hrefFor(value);
}
