/**
 * `ladder/matchmaking`: the same exports as `ladder-core/matchmaking` (packages/core), so code written against
 * the `ladder` package keeps working; the rating library alone installs as `ladder-core`.
 */
export * from 'ladder-core/matchmaking';
