import { api } from '../api.js';
import { colour, lineChart } from '../charts.js';
import { formatNumber, formatPercent, h, hashLink, table } from '../ui.js';
import { ladderHeader, playerHref } from './common.js';

export async function render(main, { params, query, signal }) {
  const [ladder, { rounds }] = await Promise.all([api.ladder(params.ladder, { signal }), api.rounds(params.ladder, { signal })]);
  main.append(...ladderHeader(ladder, 'rounds', `${ladder.id}: World vs World`));
  if (rounds.length === 0) {
    main.append(h('p', {}, 'No rounds yet. Post one to /v1/ladders/' + ladder.id + '/rounds.'));
    return;
  }
  const chosenIndex = Math.max(
    0,
    rounds.findIndex((round) => round.round === query.round),
  );
  const index = query.round && rounds.some((round) => round.round === query.round) ? chosenIndex : rounds.length - 1;
  const round = rounds[index];
  const previous = index > 0 ? rounds[index - 1] : undefined;

  main.append(
    h(
      'form',
      { class: 'toolbar', onsubmit: (event) => event.preventDefault() },
      h(
        'div',
        { class: 'field' },
        h('label', { for: 'round' }, 'Round'),
        h(
          'select',
          { id: 'round', onchange: (event) => (location.hash = hashLink(`/ladders/${encodeURIComponent(ladder.id)}/rounds`, { round: event.target.value })) },
          rounds.map((candidate, position) =>
            h('option', { value: candidate.round, selected: position === index }, `${candidate.round}${position === rounds.length - 1 ? ' (latest)' : ''}`),
          ),
        ),
      ),
    ),
  );

  // One colour per world for the whole page, whatever the round: worlds in name
  // order over every round, so a world keeps its colour in the bars, the chart and
  // the tables, and from one round to the next.
  const worldColour = worldColours(rounds);
  const ratings = round.ratings ?? {};
  const previousRatings = previous?.ratings ?? {};
  // The service groups worlds after rating each round: these tiers are the matchups that follow it.
  const isLatest = index === rounds.length - 1;
  main.append(
    h('h2', {}, isLatest ? 'This round’s tiers of three' : `Tiers drawn after round ${round.round}`),
    h('p', { class: 'meta' }, `Worlds grouped by rating after round ${round.round}, highest first.`),
  );
  main.append(
    h(
      'ol',
      { class: 'cards tiers', id: 'tiers' },
      tiersOf(round).map((group, tier) =>
        h(
          'li',
          { class: 'card tier', dataset: { tier: tier + 1 } },
          h('h3', {}, `Tier ${tier + 1}`),
          h(
            'ul',
            { class: 'worlds' },
            group.map((world) => {
              const now = ratings[world]?.rating;
              const before = previousRatings[world]?.rating;
              const change = now !== undefined && before !== undefined ? now - before : undefined;
              return h(
                'li',
                { dataset: { world } },
                swatch(worldColour, world),
                h('span', { class: 'world-name' }, h('a', { href: playerHref(ladder.id, world) }, world)),
                h('span', { class: 'num world-rating' }, formatNumber(now, 1)),
                change === undefined ? null : h('span', { class: `num change ${change > 0 ? 'up' : change < 0 ? 'down' : ''}` }, `${change >= 0 ? '+' : ''}${change.toFixed(1)}`),
              );
            }),
          ),
        ),
      ),
    ),
  );

  main.append(h('h2', {}, `Score share of each match in round ${round.round}`));
  main.append(
    h(
      'ul',
      { class: 'shares', id: 'shares' },
      (round.matches ?? []).map((match, matchIndex) => {
        const worlds = Object.keys(match.worlds);
        return h(
          'li',
          { class: 'share-match' },
          h(
            'div',
            { class: 'share-bar', role: 'img', 'aria-label': worlds.map((world) => `${world} ${formatPercent(match.shares?.[world])}`).join(', ') },
            worlds.map((world) =>
              h(
                'span',
                { class: 'share', style: { width: `${((match.shares?.[world] ?? 0) * 100).toFixed(2)}%`, backgroundColor: worldColour(world) }, dataset: { world } },
                `${world} ${formatPercent(match.shares?.[world], 0)}`,
              ),
            ),
          ),
          h('p', { class: 'meta' }, `Match ${matchIndex + 1}: `, worlds.map((world) => `${world} ${match.worlds[world]}`).join(' · ')),
          topScoreNote(match, ratings, previous ? previousRatings : undefined),
        );
      }),
    ),
  );

  const allWorlds = [...new Set(rounds.flatMap((candidate) => Object.keys(candidate.ratings ?? {})))].sort(
    (a, b) => (ratings[b]?.rating ?? -Infinity) - (ratings[a]?.rating ?? -Infinity),
  );
  const chart = lineChart({
    title: 'Each world’s rating over the rounds',
    x: rounds.map((_round, position) => position),
    series: allWorlds.map((world) => ({
      label: world,
      values: rounds.map((candidate) => candidate.ratings?.[world]?.rating ?? null),
      color: worldColour(world),
    })),
    xLabel: 'Round',
    yLabel: 'Rating',
    formatX: (value) => rounds[value]?.round ?? '',
    height: 320,
  });
  main.append(chart.figure);

  main.append(
    table({
      caption: `Ratings after round ${round.round}`,
      id: 'world-ratings',
      columns: [{ label: 'World' }, { label: 'Rating', numeric: true }, { label: 'RD', numeric: true }],
      rows: allWorlds
        .filter((world) => ratings[world])
        .map((world) =>
          h(
            'tr',
            { dataset: { world } },
            h('td', {}, swatch(worldColour, world), h('a', { href: playerHref(ladder.id, world) }, world)),
            h('td', { class: 'num' }, formatNumber(ratings[world].rating, 1)),
            h('td', { class: 'num' }, formatNumber(ratings[world].rd, 1)),
          ),
        ),
    }),
  );
  return chart.destroy;
}

/**
 * The top-scoring world of a match that still lost rating (or a world that
 * gained rating without the top score): the rating follows the score share
 * against what the ratings expected, not the placing. Needs the ratings of the
 * round before; none for the first round.
 */
function topScoreNote(match, ratings, before) {
  if (!before) return null;
  const worlds = Object.keys(match.worlds ?? {});
  const top = Math.max(...worlds.map((world) => match.worlds[world]));
  const sole = worlds.filter((world) => match.worlds[world] === top).length === 1;
  const notes = [];
  for (const world of worlds) {
    const now = ratings[world]?.rating;
    const then = before[world]?.rating;
    if (now === undefined || then === undefined) continue;
    const change = now - then;
    const won = sole && match.worlds[world] === top;
    const lost = match.worlds[world] < top;
    if (won && change < 0) notes.push(`${world}: win · lost rating (${change.toFixed(1)}): score share below expected`);
    else if (lost && change > 0) notes.push(`${world}: loss · gained rating (+${change.toFixed(1)}): score share above expected`);
  }
  return notes.length === 0 ? null : h('p', { class: 'meta share-note' }, notes.join('; '));
}

/** world → colour, fixed by the world's place among every round's worlds in name order. */
function worldColours(rounds) {
  const names = new Set();
  for (const round of rounds) {
    for (const world of Object.keys(round.ratings ?? {})) names.add(world);
    for (const match of round.matches ?? []) for (const world of Object.keys(match.worlds ?? {})) names.add(world);
  }
  const colours = new Map([...names].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)).map((world, index) => [world, colour(index)]));
  return (world) => colours.get(world) ?? colour(colours.size);
}

/** A small square in the world's colour, so the lists and tables key the chart and bars. */
function swatch(worldColour, world) {
  return h('span', { class: 'swatch', 'aria-hidden': 'true', style: { backgroundColor: worldColour(world) } });
}

/** The round's groups of three, highest rated first; from its matches when groups are missing. */
function tiersOf(round) {
  if (Array.isArray(round.groups) && round.groups.length > 0) return round.groups;
  return (round.matches ?? []).map((match) => Object.keys(match.worlds));
}
