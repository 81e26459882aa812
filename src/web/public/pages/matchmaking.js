import { api } from '../api.js';
import { clear, errorMessage, formatDate, formatPercent, formatSeconds, h, hashLink, table } from '../ui.js';
import { ladderHeader, ratedMatchCells } from './common.js';

/** @default 3000 ms; short enough to feel live, long enough not to load the service. */
const POLL_MS = 3000;

export async function render(main, { params, signal }) {
  const ladder = await api.ladder(params.ladder, { signal });
  main.append(...ladderHeader(ladder, 'matchmaking', `${ladder.id}: matchmaking`));

  const summary = h('p', { id: 'queue-summary', class: 'big-number', 'aria-live': 'polite', 'aria-atomic': 'true' }, 'Loading the queue…');
  const updated = h('span', { id: 'queue-updated', class: 'meta' });
  const waitFigures = h('p', { id: 'queue-waits', class: 'meta' });
  let paused = false;
  const pauseButton = h('button', { type: 'button', id: 'pause', 'aria-pressed': 'false' }, 'Pause updates');
  pauseButton.addEventListener('click', () => {
    paused = !paused;
    pauseButton.setAttribute('aria-pressed', String(paused));
    pauseButton.textContent = paused ? 'Resume updates' : 'Pause updates';
    if (!paused) refresh();
  });
  const regions = h('div', { id: 'by-region' });
  const bands = h('div', { id: 'by-band' });
  const recent = h('div', { id: 'recent-matches' });
  const why = h('div', { id: 'why-waiting' });
  const rated = h('div', { id: 'rated-matches' });
  const problem = h('div', { 'aria-live': 'assertive' });

  main.append(
    h('div', { class: 'live-bar' }, summary, h('div', {}, pauseButton, ' ', updated)),
    waitFigures,
    problem,
    ...ruleSetSection(ladder.matchmaking?.ruleSet, ladder.matchmaking?.attributesFromLadder),
    ...(ladder.matchmaking?.ruleSet ? [h('section', { 'aria-labelledby': 'why-heading' }, h('h2', { id: 'why-heading' }, 'Why tickets wait'), why)] : []),
    h(
      'div',
      { class: 'grid-2' },
      h('section', { 'aria-labelledby': 'band-heading' }, h('h2', { id: 'band-heading' }, 'Waiting by percentile band'), bands),
      h('section', { 'aria-labelledby': 'region-heading' }, h('h2', { id: 'region-heading' }, 'Waiting by region'), regions),
    ),
    h('section', { 'aria-labelledby': 'recent-heading' }, h('h2', { id: 'recent-heading' }, 'Recently made matches'), recent),
    h(
      'section',
      { 'aria-labelledby': 'rated-heading' },
      h('h2', { id: 'rated-heading' }, 'Recently rated matches'),
      rated,
      h('p', {}, h('a', { href: hashLink(`/ladders/${encodeURIComponent(ladder.id)}/matches`) }, 'Every match')),
    ),
  );

  let busy = false;
  async function refresh() {
    if (busy || signal.aborted) return;
    busy = true;
    try {
      const [queue, matches] = await Promise.all([api.queue(ladder.id, { signal }), api.matches(ladder.id, { limit: 10 }, { signal }).catch((error) => ({ error }))]);
      clear(problem);
      drawQueue(queue);
      drawRated(matches);
      updated.textContent = `Updated ${new Date().toLocaleTimeString()}`;
    } catch (error) {
      const message = errorMessage(error);
      if (message) clear(problem).append(h('p', { class: 'error', role: 'alert' }, message));
    } finally {
      busy = false;
    }
  }

  /** A rule-set queue: the rule that held the waiting tickets most often in the last pass, per rule. */
  function drawWhy(whyWaiting, waiting) {
    const entries = whyWaiting ? Object.entries(whyWaiting.heldBy ?? {}) : [];
    if (!whyWaiting || entries.length === 0) {
      clear(why).append(h('p', {}, whyWaiting ? 'The last pass held no ticket.' : waiting > 0 ? 'No pass has run yet.' : 'Nobody waiting.'));
      return;
    }
    clear(why).append(
      table({
        caption: `The rule that kept each waiting ticket out of candidate matches most often, in the pass of ${formatDate(whyWaiting.passAt)}`,
        id: 'why-table',
        columns: [{ label: 'Rule' }, { label: 'Tickets held', numeric: true }],
        // In the answer's order: most held first.
        rows: entries.map(([rule, count]) => h('tr', { dataset: { rule } }, h('td', {}, rule), h('td', { class: 'num' }, String(count)))),
      }),
    );
  }

  function drawQueue(queue) {
    const waiting = queue.waiting ?? 0;
    summary.textContent = `${waiting} ${waiting === 1 ? 'ticket' : 'tickets'} waiting`;
    // How long the waiting tickets have waited so far (the queue's own figures; the table below has each match's).
    const waits = queue.waitSeconds;
    waitFigures.textContent = waiting > 0 && waits ? `Waiting so far: ${formatSeconds(waits.mean)} on average, ${formatSeconds(waits.max)} at most.` : '';
    const regionEntries = Object.entries(queue.byRegion ?? {}).sort((a, b) => b[1] - a[1]);
    clear(regions).append(
      regionEntries.length === 0
        ? h('p', {}, 'Nobody waiting.')
        : table({
            caption: 'Tickets waiting per region',
            id: 'region-table',
            columns: [{ label: 'Region' }, { label: 'Waiting', numeric: true }],
            rows: regionEntries.map(([region, count]) => h('tr', { dataset: { region } }, h('td', {}, region), h('td', { class: 'num' }, String(count)))),
          }),
    );
    const bandEntries = queue.byBand ?? [];
    const most = Math.max(1, ...bandEntries.map((band) => band.count));
    clear(bands).append(
      bandEntries.length === 0
        ? h('p', {}, 'Nobody waiting.')
        : h(
            'ul',
            { class: 'bars', id: 'band-bars' },
            bandEntries.map((band) =>
              h(
                'li',
                { dataset: { band: band.band } },
                h('span', { class: 'bar-label' }, `${band.band}`),
                h('span', { class: 'bar-track' }, h('span', { class: band.count === 0 ? 'bar empty' : 'bar', style: { width: `${((band.count / most) * 100).toFixed(1)}%` } })),
                h('span', { class: 'num bar-value' }, String(band.count)),
              ),
            ),
          ),
    );
    if (queue.whyWaiting !== undefined) drawWhy(queue.whyWaiting, waiting);
    const recentMatches = queue.recent ?? [];
    clear(recent).append(
      recentMatches.length === 0
        ? h('p', {}, 'No matches made yet.')
        : table({
            caption: 'Matches made by the matchmaker, newest first',
            id: 'recent-table',
            stack: true,
            columns: [
              { label: 'When' },
              { label: 'Region' },
              { label: 'Teams' },
              { label: 'Team 1 wins', numeric: true },
              { label: 'Median wait', numeric: true },
              { label: 'Longest wait', numeric: true },
            ],
            rows: recentMatches.map((match) =>
              h(
                'tr',
                { dataset: { match: match.matchId } },
                h('td', {}, formatDate(match.at)),
                h('td', {}, match.region ?? '–'),
                h('td', { class: 'teams' }, teamsText(match)),
                h('td', { class: 'num win-probability' }, formatPercent(match.winProbability)),
                h('td', { class: 'num' }, formatSeconds(match.waitSeconds?.p50)),
                h('td', { class: 'num' }, formatSeconds(match.waitSeconds?.max)),
              ),
            ),
          }),
    );
  }

  function drawRated(result) {
    if (result.error) {
      const message = errorMessage(result.error);
      clear(rated).append(h('p', { class: 'meta' }, `Not available: ${message}`));
      return;
    }
    const matches = result.matches ?? [];
    clear(rated).append(
      matches.length === 0
        ? h('p', {}, 'No rated matches yet.')
        : table({
            caption: 'Rated matches, newest first, with the win chance predicted before rating',
            id: 'rated-table',
            stack: true,
            columns: [{ label: 'When' }, { label: 'Teams' }, { label: 'Predicted', numeric: true }, { label: 'Result' }],
            rows: matches.map((match) => h('tr', { class: match.void ? 'void' : null, dataset: { match: match.id } }, ratedMatchCells(ladder.id, match))),
          }),
    );
  }

  await refresh();
  const timer = setInterval(() => {
    if (!paused && document.visibilityState !== 'hidden') refresh();
  }, POLL_MS);
  // The assignment stream makes new matches show at once; polling covers the rest.
  let stream;
  if ('EventSource' in window) {
    try {
      stream = new EventSource(api.assignmentsUrl(ladder.id));
      stream.addEventListener('assignment', () => {
        if (!paused) refresh();
      });
      stream.onerror = () => stream?.close();
    } catch {
      stream = undefined;
    }
  }
  return () => {
    clearInterval(timer);
    stream?.close();
  };
}

/** A rule-set queue's teams: name, size, and role slots (Ladder's extension), and the attributes the ladder fills in; nothing for a team-rank queue. */
function ruleSetSection(ruleSet, attributesFromLadder) {
  if (!ruleSet || !Array.isArray(ruleSet.teams)) return [];
  const slots = (roles) =>
    roles && typeof roles === 'object'
      ? Object.entries(roles)
          .map(([role, count]) => `${count} ${role}`)
          .join(', ')
      : '–';
  return [
    h(
      'section',
      { 'aria-labelledby': 'rule-set-heading', id: 'rule-set' },
      h('h2', { id: 'rule-set-heading' }, `Rule set${typeof ruleSet.name === 'string' ? `: ${ruleSet.name}` : ''}`),
      table({
        caption: 'Teams of every match this queue forms',
        id: 'rule-set-teams',
        columns: [{ label: 'Team' }, { label: 'Players', numeric: true }, { label: 'Teams of this kind', numeric: true }, { label: 'Role slots' }],
        rows: ruleSet.teams.map((team) =>
          h(
            'tr',
            {},
            h('td', {}, String(team.name)),
            h('td', { class: 'num' }, `${team.minPlayers}–${team.maxPlayers}`),
            h('td', { class: 'num' }, String(team.quantity ?? 1)),
            h('td', {}, slots(team.roles)),
          ),
        ),
      }),
      ...(attributesFromLadder && Object.keys(attributesFromLadder).length > 0
        ? [
            h(
              'p',
              { id: 'attributes-from-ladder' },
              `Filled in by the ladder: ${Object.entries(attributesFromLadder)
                .map(([name, source]) => `${name} (the player's ${source})`)
                .join(', ')}.`,
            ),
          ]
        : []),
    ),
  ];
}

/** Players per team; a rule-set match names its teams and, with role slots, who plays what. */
function teamsText(match) {
  const teams = match.players ?? match.teams ?? [];
  const roles = match.roles ?? {};
  return teams
    .map((team, i) => {
      const names = team.map((p) => (Object.hasOwn(roles, p) ? `${p} (${roles[p]})` : p)).join(', ');
      return match.teamNames?.[i] !== undefined ? `${match.teamNames[i]}: ${names}` : names;
    })
    .join(' vs ');
}
