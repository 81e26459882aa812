import { describe, expect, it } from 'vitest';
import { InvalidInputError } from 'ladder-core/core/errors.js';
import type { Match } from 'ladder-core/core/match.js';
import { describeSystem } from 'ladder-core/core/registry.js';
import { checkLimits, checkMatchLimits, matchLimitsOf, SERVICE_MATCH_LIMITS, systemJson } from './systems.js';

const match = (sizes: number[]): Match => ({ teams: sizes.map((size, t) => ({ players: Array.from({ length: size }, (_, i) => ({ id: `t${t}p${i}` })), rank: t + 1 })) });

function fieldOf(work: () => void): string | undefined {
  try {
    work();
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidInputError);
    return (error as InvalidInputError).field;
  }
  return undefined;
}

describe('match limits per system', () => {
  it('whr bounds the players of a match; the others keep the service bounds; GET /v1/systems states them', () => {
    expect(matchLimitsOf(describeSystem('whr'))).toEqual({ teams: 64, playersPerTeam: 64, players: 256 });
    expect(matchLimitsOf(describeSystem('glicko2'))).toEqual(SERVICE_MATCH_LIMITS);
    expect(systemJson(describeSystem('whr')).limits).toEqual({ teams: 64, playersPerTeam: 64, players: 256 });
  });

  it('a match beyond a bound is refused naming the field: teams, teams[i].players, or teams for all players', () => {
    const limits = { teams: 4, playersPerTeam: 3, players: 8 };
    expect(fieldOf(() => checkLimits(match([1, 1, 1, 1]), limits, 'X'))).toBeUndefined();
    expect(fieldOf(() => checkLimits(match([1, 1, 1, 1, 1]), limits, 'X'))).toBe('teams');
    expect(fieldOf(() => checkLimits(match([1, 2, 3, 4]), limits, 'X'))).toBe('teams[3].players');
    expect(fieldOf(() => checkLimits(match([3, 3, 3]), limits, 'X'))).toBe('teams');
    // A 64-player free-for-all is a whr match; 64 teams of 64 players is not (4,096 players).
    expect(fieldOf(() => checkMatchLimits('whr', match(Array.from({ length: 64 }, () => 1))))).toBeUndefined();
    expect(fieldOf(() => checkMatchLimits('whr', match(Array.from({ length: 64 }, () => 64))))).toBe('teams');
    expect(fieldOf(() => checkMatchLimits('glicko2', match(Array.from({ length: 64 }, () => 64))))).toBeUndefined();
  });
});
