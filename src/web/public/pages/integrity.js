// The integrity report of a ladder, for admins (GET /v1/ladders/{id}/reports/integrity):
// pairs who meet far more often than their activity predicts with alternating
// or one-sided results, and players whose quit rate or results stand out, most
// suspicious first, each with its counts, expected counts and z-scores. Without
// an admin key the page says who may see it instead.
import { ApiError, api, apiKey, apiKeyRejected, canOfferAdmin } from '../api.js';
import { formatNumber, formatPercent, h, table } from '../ui.js';
import { ladderHeader, playerHref } from './common.js';

/** A p- or q-value: small ones in scientific notation. */
export function formatP(value) {
  if (value === null || value === undefined || Number.isNaN(value)) return '–';
  if (value === 0) return '0';
  return value < 0.001 ? value.toExponential(1) : value.toFixed(3);
}

function formatZ(value) {
  return formatNumber(value, 1);
}

/** What the entry found, in words. */
function findingText(entry) {
  if (entry.kind === 'pair') return entry.pattern === 'alternating' ? 'Pair: results alternate' : 'Pair: one-sided results';
  if (entry.kind === 'quits') return 'Player: quits';
  return 'Player: results';
}

/** The entry's main count against its expectation: [what is counted, observed, expected, z]. */
function mainCount(entry) {
  const e = entry.evidence;
  if (entry.kind === 'pair') return ['meetings', e.meetings, e.expectedMeetings, e.meetingZ];
  if (entry.kind === 'quits') return ['quits', e.quits, e.expectedQuits, e.z];
  return ['wins', e.wins, e.expectedWins, e.z];
}

/** One line on the pattern behind the entry. */
function patternText(entry, players) {
  const e = entry.evidence;
  if (entry.kind === 'pair' && entry.pattern === 'alternating')
    return `${e.runs} runs in ${e.wins[0] + e.wins[1]} results, ${formatNumber(e.expectedRuns, 1)} expected (z ${formatZ(e.runsZ)})`;
  if (entry.kind === 'pair') return `${players[0]} won ${e.wins[0]} of ${e.wins[0] + e.wins[1]}, ${formatPercent(e.expectedWinShare, 0)} expected (z ${formatZ(e.winZ)})`;
  if (entry.kind === 'quits') return `${e.quits} quits in ${e.matches} matches; the ladder quits ${formatPercent(e.populationRate)} of seats`;
  const top = e.topOpponent ? `, ${formatPercent(e.topOpponentShare, 0)} of them against ${e.topOpponent}` : '';
  return `${e.wins} wins of ${e.decisive} decisive matches${top}; longest streak ${e.longestWinStreak}`;
}

/** Every figure of the evidence, labelled, in a disclosure. */
function evidenceDetails(entry) {
  const e = entry.evidence;
  const rows =
    entry.kind === 'pair'
      ? [
          ['Meetings', `${e.meetings} (expected ${formatNumber(e.expectedMeetings)}, z ${formatZ(e.meetingZ)}, p ${formatP(e.meetingP)})`],
          ['Results (first player’s side)', e.results.length > 80 ? `${e.results.slice(0, 80)}…` : e.results],
          ['Wins', `${e.wins[0]}–${e.wins[1]}${e.draws ? `, ${e.draws} draws` : ''}`],
          ['Runs', `${e.runs} (expected ${formatNumber(e.expectedRuns)}, z ${formatZ(e.runsZ)}, p ${formatP(e.alternationP)})`],
          ['First player’s expected win share', `${formatPercent(e.expectedWinShare)} (z ${formatZ(e.winZ)}, p ${formatP(e.oneSidedP)})`],
          ['Pattern p', formatP(e.patternP)],
          ['q (over the pairs tested)', `${formatP(e.q)} of ${e.tested}`],
        ]
      : entry.kind === 'quits'
        ? [
            ['Matches', String(e.matches)],
            ['Quits', `${e.quits} (expected ${formatNumber(e.expectedQuits)}, z ${formatZ(e.z)}, p ${formatP(e.p)})`],
            ['Ladder quit rate', formatPercent(e.populationRate)],
            ['q (over the players tested)', `${formatP(e.q)} of ${e.tested}`],
          ]
        : [
            ['Matches', `${e.matches} (${e.decisive} decisive)`],
            ['Wins', `${e.wins} (expected ${formatNumber(e.expectedWins)}, z ${formatZ(e.z)}, p ${formatP(e.p)})`],
            ['Longest win streak', String(e.longestWinStreak)],
            ['Distinct opponents', String(e.distinctOpponents)],
            ['Most-beaten opponent', e.topOpponent ? `${e.topOpponent} (${formatPercent(e.topOpponentShare)} of the wins)` : '–'],
            ['q (over the players tested)', `${formatP(e.q)} of ${e.tested}`],
          ];
  return h(
    'details',
    { class: 'evidence' },
    h('summary', {}, 'Every figure'),
    h(
      'dl',
      {},
      rows.map(([label, value]) => h('div', {}, h('dt', {}, label), h('dd', {}, value))),
    ),
  );
}

/** Why the report is not shown: no key, a refused key, or a key without the admin scope. */
function adminOnly(reason) {
  const why = {
    'no-key': 'Open “API key” in the header and save a key with the admin scope to see it.',
    refused: 'The saved API key was refused by the service; save a working key with the admin scope under “API key”.',
    'not-admin': 'The saved API key lacks the admin scope. Save an admin key under “API key” to see the report.',
  }[reason];
  return h(
    'div',
    { id: 'integrity-admin-only', class: 'notice', role: 'status', dataset: { reason } },
    h(
      'p',
      {},
      h('strong', {}, 'For administrators only. '),
      'The integrity report names players who may be trading wins, boosting or quitting, so the service shows it only to a key with the admin scope.',
    ),
    h('p', {}, why),
  );
}

export async function render(main, { params, signal }) {
  const ladder = await api.ladder(params.ladder, { signal });
  main.append(...ladderHeader(ladder, 'integrity', `${ladder.id}: integrity report`));
  main.append(
    h(
      'p',
      { class: 'explain' },
      'Pairs who meet far more often than their activity predicts with results that alternate or never vary, and players whose quit rate or results stand out, most suspicious first. An entry is a reason to look, not a verdict.',
    ),
  );
  if (!apiKey()) {
    main.append(adminOnly('no-key'));
    return;
  }
  if (apiKeyRejected()) {
    main.append(adminOnly('refused'));
    return;
  }
  // The service already answered this key 403 here: no need to ask again.
  if (!canOfferAdmin()) {
    main.append(adminOnly('not-admin'));
    return;
  }
  let report;
  try {
    report = await api.integrity(ladder.id, {}, { signal });
  } catch (error) {
    if (error instanceof ApiError && (error.status === 401 || error.status === 403)) {
      main.append(adminOnly(error.status === 403 ? 'not-admin' : apiKeyRejected() ? 'refused' : 'no-key'));
      return;
    }
    throw error;
  }

  main.append(
    h(
      'p',
      { id: 'integrity-summary', class: 'meta' },
      `${report.matches} most recent counting ${report.matches === 1 ? 'match' : 'matches'} of ${report.players} players examined; ${report.tested.pairs} ${report.tested.pairs === 1 ? 'pair' : 'pairs'} and ${report.tested.players} ${report.tested.players === 1 ? 'player' : 'players'} tested; ${formatPercent(report.quitRate)} of seats quit.`,
    ),
  );
  const entries = report.entries ?? [];
  if (entries.length === 0) {
    main.append(h('p', { id: 'integrity-empty' }, 'Nothing stands out: no pair and no player passed the tests.'));
    return;
  }
  const rows = entries.map((entry, index) => {
    const players = entry.kind === 'pair' ? entry.players : [entry.player];
    const [counted, observed, expected, z] = mainCount(entry);
    return h(
      'tr',
      { dataset: { kind: entry.kind, players: players.join(' ') } },
      h('td', { class: 'num position' }, String(index + 1)),
      h('td', { class: 'finding' }, findingText(entry)),
      h(
        'td',
        { class: 'players' },
        h(
          'span',
          { class: 'names' },
          players.map((id, position) => [position > 0 ? ' and ' : '', h('a', { href: playerHref(ladder.id, id) }, id)]),
        ),
      ),
      h('td', { class: 'num observed' }, `${observed} ${counted}`),
      h('td', { class: 'num expected' }, formatNumber(expected)),
      h('td', { class: 'num z' }, formatZ(z)),
      h('td', { class: 'num q' }, formatP(entry.evidence.q)),
      h('td', { class: 'evidence-cell' }, h('p', { class: 'pattern' }, patternText(entry, players)), evidenceDetails(entry)),
    );
  });
  main.append(
    table({
      caption: `${ladder.id}: integrity report, most suspicious first (q: the false-discovery-adjusted p-value)`,
      id: 'integrity-table',
      stack: true,
      columns: [
        { label: '#', numeric: true },
        { label: 'Finding' },
        { label: 'Players' },
        { label: 'Observed', numeric: true },
        { label: 'Expected', numeric: true },
        { label: 'z', numeric: true },
        { label: 'q', numeric: true },
        { label: 'Evidence' },
      ],
      rows,
    }),
  );
}
