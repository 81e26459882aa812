// "Void…": asks for a reason, voids the match through the API (correct scope),
// then reloads the page with the service's answer on top of it.
import { ApiError, api, canOfferWrites } from '../api.js';
import { systemInfo } from '../systems.js';
import { errorMessage, formatRating, formatSigned, h, ratingDecimals, refreshWithNotice, table } from '../ui.js';

/**
 * Whether the page offers "Void…" on this ladder's matches: a key that may
 * write is saved (api.js canOfferWrites), and the ladder is not World vs World,
 * whose rounds are rated as one period and cannot be voided match by match.
 */
export function canVoid(ladder) {
  return !systemInfo(ladder.system).capabilities.rounds && canOfferWrites();
}

/** The "Void…" button of one match, named for screen readers by the match ("Void duel-12…"). */
export function voidButton(ladder, matchId) {
  return h(
    'button',
    {
      type: 'button',
      class: 'secondary void-button',
      dataset: { match: matchId },
      'aria-label': `Void ${matchId}…`,
      onclick: (event) => openVoidDialog(ladder, matchId, event.currentTarget),
    },
    'Void…',
  );
}

/**
 * A modal dialog: the reason (required, up to 500 characters, kept with the
 * match), Void and Cancel. The service's refusal is shown in the dialog; its
 * answer, after the page reloads.
 */
export function openVoidDialog(ladder, matchId, opener) {
  const reason = h('textarea', { id: 'void-reason', name: 'reason', rows: '3', maxlength: '500', required: true, 'aria-describedby': 'void-explain' });
  const problem = h('p', { id: 'void-problem', class: 'error', role: 'alert', hidden: true });
  const confirm = h('button', { type: 'submit', id: 'void-confirm' }, 'Void the match');
  const cancel = h('button', { type: 'button', class: 'secondary', id: 'void-cancel' }, 'Cancel');
  const form = h(
    'form',
    { class: 'stack', id: 'void-form' },
    h('div', { class: 'field' }, h('label', { for: 'void-reason' }, 'Reason'), reason),
    problem,
    h('p', { class: 'actions' }, confirm, ' ', cancel),
  );
  const dialog = h(
    'dialog',
    { class: 'void-dialog', id: 'void-dialog', 'aria-labelledby': 'void-title' },
    h('h2', { id: 'void-title' }, `Void match ${matchId}`),
    h(
      'p',
      { id: 'void-explain', class: 'explain' },
      'A voided match stays listed, marked void with this reason, and never counts again: every later match of its players is rated again without it. It cannot be undone.',
    ),
    form,
  );
  let busy = false;
  cancel.addEventListener('click', () => dialog.close());
  dialog.addEventListener('cancel', (event) => {
    if (busy) event.preventDefault();
  });
  let refused = false;
  dialog.addEventListener('close', () => {
    dialog.remove();
    // The key turned out unable to write: show the page again without the Void buttons.
    if (refused && !canOfferWrites()) window.dispatchEvent(new CustomEvent('ladder:refresh'));
    else if (opener?.isConnected) opener.focus();
  });
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const text = reason.value.trim();
    if (!text) {
      showProblem('Give a reason: it is kept with the match and shown with it.');
      reason.focus();
      return;
    }
    busy = true;
    confirm.disabled = true;
    cancel.disabled = true;
    confirm.textContent = 'Voiding…';
    try {
      const answer = await api.voidMatch(ladder.id, matchId, text);
      busy = false;
      dialog.close();
      refreshWithNotice(voidAnswer(ladder, matchId, answer));
    } catch (error) {
      busy = false;
      confirm.disabled = false;
      cancel.disabled = false;
      confirm.textContent = 'Void the match';
      refused = error instanceof ApiError && (error.status === 401 || error.status === 403);
      showProblem(voidProblem(error));
    }
  });
  function showProblem(message) {
    problem.textContent = message;
    problem.hidden = false;
  }
  document.body.append(dialog);
  dialog.showModal();
  reason.focus();
  return dialog;
}

function voidProblem(error) {
  if (error instanceof ApiError && error.status === 403) return `${error.message} — this key may not void matches; voiding needs a key with the correct scope.`;
  if (error instanceof ApiError && error.status === 401) return `${error.message} — enter a key with the correct scope under “API key”.`;
  return errorMessage(error) ?? 'The match was not voided.';
}

/**
 * The service's answer as a notice: which match, how many later matches were
 * rated again, and each affected player's rating before → after.
 */
export function voidAnswer(ladder, matchId, answer) {
  const system = ladder.system;
  const rerated = answer.rerated ?? 0;
  const players = answer.players ?? [];
  const summary =
    answer.changed === false
      ? [h('strong', {}, `${matchId} was already void: `), 'nothing changed.']
      : [
          h('strong', {}, `Voided ${matchId}: `),
          `${rerated} later ${rerated === 1 ? 'match' : 'matches'} re-rated, `,
          `${players.length} ${players.length === 1 ? 'player’s rating' : 'players’ ratings'} changed.`,
        ];
  const state = (value) => (value ? formatRating(value.rating, system) : '–');
  const rows = players.map((player) => {
    const change = player.before && player.after ? player.after.rating - player.before.rating : null;
    return h(
      'tr',
      { dataset: { player: player.id } },
      h('td', { class: 'player' }, player.id),
      h('td', { class: 'num before' }, state(player.before)),
      h('td', { class: 'num after' }, state(player.after)),
      h(
        'td',
        { class: `num change ${change > 0 ? 'up' : change < 0 ? 'down' : ''}` },
        change === null ? (player.after ? 'new' : 'gone') : formatSigned(change, ratingDecimals(system)),
      ),
    );
  });
  return h(
    'section',
    { class: 'notice write-answer', id: 'void-answer', role: 'status', 'aria-label': `Voided ${matchId}` },
    h('p', { id: 'void-summary' }, summary),
    rows.length > 0
      ? table({
          caption: 'Ratings before → after the void',
          id: 'void-players',
          columns: [{ label: 'Player' }, { label: 'Before', numeric: true }, { label: 'After', numeric: true }, { label: 'Change', numeric: true }],
          rows,
        })
      : null,
    h('p', { class: 'actions' }, h('button', { type: 'button', class: 'secondary', id: 'void-answer-close', onclick: dismiss }, 'Dismiss')),
  );
}

function dismiss(event) {
  const notice = event.currentTarget.closest('section');
  const heading = notice?.closest('main')?.querySelector('h1');
  notice?.remove();
  heading?.focus();
}
