// Every rated match of a ladder, newest first, paged; voided ones struck
// through with their reason, and "Void…" for a viewer whose key may write.
import { api, enc } from '../api.js';
import { h, hashLink, table } from '../ui.js';
import { ladderHeader, ratedMatchCells } from './common.js';
import { canVoid, voidButton } from './void.js';

const PAGE = 25;

export async function render(main, { params, query, signal }) {
  const ladder = await api.ladder(params.ladder, { signal });
  main.append(...ladderHeader(ladder, 'matches', `${ladder.id}: matches`));
  // Paged by the service's cursor: each page asks for the matches before the last one shown (`next`), so
  // a page deep in a long log costs what the first does (an offset would read every match it skips).
  const before = Number.parseInt(query.before ?? '', 10);
  const cursor = Number.isInteger(before) && before > 0 ? before : undefined;
  const path = `/ladders/${enc(ladder.id)}/matches`;
  const { matches, next } = await api.matches(ladder.id, { limit: PAGE, ...(cursor !== undefined ? { before: cursor } : {}) }, { signal });
  const voided = matches.filter((match) => match.void).length;

  const status = h('p', { id: 'matches-status', 'aria-live': 'polite' });
  if (matches.length === 0) {
    status.append(
      cursor === undefined ? 'No rated matches yet.' : 'No matches this far down the list, ',
      cursor === undefined ? '' : h('a', { href: hashLink(path), id: 'back-to-list' }, 'back to the newest'),
      cursor === undefined ? '' : '.',
    );
  } else {
    const where = cursor === undefined ? 'the newest' : `from #${matches[0].seq} on down`;
    status.append(`${matches.length} ${matches.length === 1 ? 'match' : 'matches'}, ${where}, newest first${voided ? `; ${voided} voided (struck through, never counted)` : ''}.`);
  }
  main.append(status);
  if (matches.length === 0) return;

  const voidable = canVoid(ladder);
  const columns = [
    { label: 'Match' },
    { label: 'When' },
    { label: 'Teams' },
    { label: 'Predicted', numeric: true },
    { label: 'Result' },
    voidable ? { label: 'Action' } : null,
  ].filter(Boolean);
  const rows = matches.map((match) =>
    h(
      'tr',
      { class: match.void ? 'void' : null, dataset: { match: match.id } },
      h('td', { class: 'match-id' }, match.id, match.round ? h('span', { class: 'meta' }, ` · round ${match.round}`) : null),
      ...ratedMatchCells(ladder.id, match),
      voidable ? h('td', { class: 'action' }, match.void || match.round ? '' : voidButton(ladder, match.id)) : null,
    ),
  );
  main.append(table({ caption: `${ladder.id}: matches, newest first, with the win chance predicted before rating`, columns, rows, id: 'match-table', stack: true }));
  main.append(
    h(
      'nav',
      { class: 'pager', 'aria-label': 'Match list pages' },
      cursor !== undefined ? h('a', { href: hashLink(path), rel: 'first', id: 'newer-page' }, '← Newest') : h('span', { class: 'disabled', 'aria-disabled': 'true' }, '← Newest'),
      h('span', { id: 'page-number' }, cursor === undefined ? 'Newest matches' : `Matches before #${cursor}`),
      next !== null
        ? h('a', { href: hashLink(path, { before: next }), rel: 'next', id: 'older-page' }, 'Older →')
        : h('span', { class: 'disabled', 'aria-disabled': 'true' }, 'Older →'),
    ),
  );
}
