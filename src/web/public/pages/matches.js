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
  const offset = Math.max(0, Number.parseInt(query.offset ?? '0', 10) || 0);
  const path = `/ladders/${enc(ladder.id)}/matches`;
  // One more than a page: whether an older page exists, without a count.
  const { matches: fetched } = await api.matches(ladder.id, { limit: PAGE + 1, offset }, { signal });
  const matches = fetched.slice(0, PAGE);
  const hasOlder = fetched.length > PAGE;
  const voided = matches.filter((match) => match.void).length;

  const status = h('p', { id: 'matches-status', 'aria-live': 'polite' });
  if (matches.length === 0) {
    status.append(offset === 0 ? 'No rated matches yet.' : 'No matches this far down the list, ', offset === 0 ? '' : h('a', { href: hashLink(path), id: 'back-to-list' }, 'back to the newest'), offset === 0 ? '' : '.');
  } else {
    status.append(`Matches ${offset + 1}–${offset + matches.length}, newest first${voided ? `; ${voided} voided (struck through, never counted)` : ''}.`);
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
      offset > 0
        ? h('a', { href: hashLink(path, { offset: Math.max(0, offset - PAGE) || '' }), rel: 'prev', id: 'newer-page' }, '← Newer')
        : h('span', { class: 'disabled', 'aria-disabled': 'true' }, '← Newer'),
      h('span', { id: 'page-number' }, `Page ${Math.floor(offset / PAGE) + 1}`),
      hasOlder ? h('a', { href: hashLink(path, { offset: offset + PAGE }), rel: 'next', id: 'older-page' }, 'Older →') : h('span', { class: 'disabled', 'aria-disabled': 'true' }, 'Older →'),
    ),
  );
}
