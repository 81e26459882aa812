/**
 * Known data for the dashboard tests, posted through the public API so the
 * pages are checked against what the service itself computed.
 */

import { mulberry32 } from 'ladder-core/core/random.js';

export const ADMIN_KEY = 'dashboard-test-admin-key-0123456789';

/** Deterministic pseudo-random numbers, so every run posts the same matches. */
const random = mulberry32;

export interface Api {
  get<T = any>(path: string): Promise<T>;
  post<T = any>(path: string, body: unknown): Promise<T>;
}

export function apiClient(baseUrl: string, key: string = ADMIN_KEY): Api {
  const call = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${baseUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`${method} ${path} -> ${response.status} ${text}`);
    return text ? JSON.parse(text) : undefined;
  };
  return { get: (path) => call('GET', path), post: (path, body) => call('POST', path, body) };
}

export const DUEL_PLAYERS = Array.from({ length: 30 }, (_, index) => `duelist-${String(index + 1).padStart(2, '0')}`);
export const SQUAD_PLAYERS = Array.from({ length: 12 }, (_, index) => `squad-${String(index + 1).padStart(2, '0')}`);
export const WORLDS = ['Aurora', 'Borealis', 'Cinder', 'Dune', 'Ember', 'Frost'];

/**
 * duel: Glicko-2, 30 players, 150 one-on-one matches (stronger player usually wins).
 * squad: team rank, 12 players, 24 three-on-three matches, some with a quitter.
 * worlds: WvW, 6 worlds over 4 rounds.
 * All public, placement after 3 matches so everyone in duel gets ranked.
 */
export async function seedKnownData(api: Api): Promise<void> {
  const now = Date.now();
  const minute = 60_000;
  await api.post('/v1/ladders', { id: 'duel', system: 'glicko2', public: true, standings: { placementMatches: 3 } });
  await api.post('/v1/ladders', { id: 'squad', system: 'teamrank', public: true, standings: { placementMatches: 3 }, matchmaking: { teamSize: 3, teams: 2 } });
  await api.post('/v1/ladders', { id: 'worlds', system: 'wvw', public: true });

  const next = random(20240601);
  const strength = new Map(DUEL_PLAYERS.map((id, index) => [id, 30 - index]));
  const duelCount = 150;
  const duels: unknown[] = [];
  for (let index = 0; index < duelCount; index += 1) {
    const a = DUEL_PLAYERS[index % 30];
    let b = DUEL_PLAYERS[Math.floor(next() * 30)];
    if (b === a) b = DUEL_PLAYERS[(index + 1) % 30];
    const chanceA = 1 / (1 + 10 ** ((strength.get(b)! - strength.get(a)!) / 10));
    const aWins = next() < chanceA;
    duels.push({
      id: `duel-${index + 1}`,
      at: new Date(now - (duelCount - index) * minute).toISOString(),
      teams: [
        { players: [a], rank: aWins ? 1 : 2 },
        { players: [b], rank: aWins ? 2 : 1 },
      ],
    });
  }
  // Ten at a time: the service batches concurrent submissions, which keeps the seed quick on a busy machine.
  for (let start = 0; start < duels.length; start += 10) {
    await Promise.all(duels.slice(start, start + 10).map((match) => api.post('/v1/ladders/duel/matches', match)));
  }

  const squadCount = 24;
  for (let index = 0; index < squadCount; index += 1) {
    const shuffled = [...SQUAD_PLAYERS].sort(() => next() - 0.5);
    const teamA = shuffled.slice(0, 3);
    const teamB = shuffled.slice(3, 6);
    const quitter = index % 4 === 0;
    await api.post('/v1/ladders/squad/matches', {
      id: `squad-${index + 1}`,
      at: new Date(now - (squadCount - index) * minute).toISOString(),
      teams: [
        { players: quitter ? [teamA[0], teamA[1], { id: teamA[2], seconds: 400, quit: true }] : teamA.map((id) => ({ id, seconds: 800 })), rank: next() < 0.5 ? 1 : 2 },
        { players: teamB.map((id) => ({ id, seconds: 800 })), rank: 0 },
      ].map((team, teamIndex, teams) => (teamIndex === 1 ? { ...team, rank: teams[0].rank === 1 ? 2 : 1 } : team)),
    });
  }

  for (let round = 1; round <= 4; round += 1) {
    const scores = WORLDS.map((world, index) => [world, Math.round(200 + 40 * (6 - index) + next() * 150)] as const);
    await api.post('/v1/ladders/worlds/rounds', {
      round: `w${round}`,
      matches: [{ worlds: Object.fromEntries(scores.slice(0, 3)) }, { worlds: Object.fromEntries(scores.slice(3, 6)) }],
    });
  }
}
