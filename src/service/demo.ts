/**
 * The demo ladders `npm start` seeds on first start, so the dashboard has
 * something to show: a team rank 6v6 ladder with quitters, a Glicko-2 1v1
 * ladder, a World-vs-World ladder with weeks of rounds and a few waiting
 * tickets. Generated from a fixed seed; skipped when the ladders exist,
 * except the waiting tickets: the in-process queue starts empty at every
 * start, so they are added again whenever the 6v6 queue is empty.
 */
import { eloExpected } from 'ladder-core/core/elo.js';
import { mulberry32 } from 'ladder-core/core/random.js';
import type { Match } from 'ladder-core/core/match.js';
import { wvwGroups } from 'ladder-core/core/wvw.js';
import type { Service } from './index.js';
import { NotFoundError } from './errors/index.js';
import type { TicketStore } from './tickets/store.js';

const DAY = 86_400_000;

function gaussian(random: () => number): number {
  const u = Math.max(random(), 1e-12);
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * random());
}

export async function seedDemo(service: Service): Promise<boolean> {
  const tickets: TicketStore = service.tickets;
  try {
    await service.ladders.get('ranked-6v6');
    await seedDemoTickets(tickets, mulberry32(2025), Date.now());
    return false;
  } catch (error) {
    if (!(error instanceof NotFoundError)) throw error;
  }
  const random = mulberry32(2024);
  const now = Date.now();

  // Team rank 6v6: 150 players of hidden skill, 450 matches over two weeks, about 4% quitters.
  const ranked = await service.ladders.create({ id: 'ranked-6v6', system: 'teamrank', public: true, standings: { placementMatches: 5 } });
  const skill = Array.from({ length: 150 }, () => gaussian(random));
  const jobs: Promise<unknown>[] = [];
  for (let m = 0; m < 450; m++) {
    const pool = [...skill.keys()].sort(() => random() - 0.5).slice(0, 12);
    const teams = [pool.slice(0, 6), pool.slice(6)];
    const strength = teams.map((t) => t.reduce((s, i) => s + skill[i]!, 0));
    const win0 = random() < 1 / (1 + Math.exp(-(strength[0]! - strength[1]!) / 2));
    const at = now - 14 * DAY + (m / 450) * 14 * DAY;
    const match: Match = {
      id: `demo-6v6-${m + 1}`,
      at,
      teams: teams.map((team, t) => ({
        rank: (t === 0) === win0 ? 1 : 2,
        players: team.map((i) => (random() < 0.04 ? { id: `p${i + 1}`, quit: true, seconds: Math.round(200 + random() * 800) } : { id: `p${i + 1}`, seconds: 1200 })),
      })),
    };
    jobs.push(service.writer.submitMatch(ranked, match));
  }
  await Promise.all(jobs);

  // Glicko-2 1v1: 80 players, 800 games over three weeks.
  const duel = await service.ladders.create({ id: 'duel-1v1', system: 'glicko2', public: true, standings: { placementMatches: 5 } });
  const duelSkill = Array.from({ length: 80 }, () => 1500 + 250 * gaussian(random));
  jobs.length = 0;
  for (let m = 0; m < 800; m++) {
    const a = Math.floor(random() * 80);
    let b = Math.floor(random() * 79);
    if (b >= a) b++;
    const pA = eloExpected(duelSkill[a]!, duelSkill[b]!);
    const r = random();
    const rank = r < pA * 0.95 ? [1, 2] : r < pA * 0.95 + 0.05 ? [1, 1] : [2, 1];
    const at = now - 21 * DAY + (m / 800) * 21 * DAY;
    jobs.push(
      service.writer.submitMatch(duel, {
        id: `demo-duel-${m + 1}`,
        at,
        teams: [
          { players: [{ id: `d${a + 1}` }], rank: rank[0] },
          { players: [{ id: `d${b + 1}` }], rank: rank[1] },
        ],
      }),
    );
  }
  await Promise.all(jobs);

  // World-vs-World: 12 worlds, 10 weekly rounds of 4 three-world matches.
  const wvw = await service.ladders.create({ id: 'wvw-eu', system: 'wvw', public: true, standings: { placementMatches: 1, windowMs: 120 * DAY } });
  const worlds = Array.from({ length: 12 }, (_, i) => ({ id: `World ${String.fromCharCode(65 + i)}`, strength: 1 + random() * 2 }));
  let groups = wvwGroups(worlds.map((w) => ({ id: w.id, rating: 1500, rd: 350 })));
  for (let week = 0; week < 10; week++) {
    const at = now - (10 - week) * 7 * DAY;
    const matches: Match[] = groups.map((group, g) => ({
      id: `demo-w${week + 1}-t${g + 1}`,
      at,
      teams: group.map((id) => {
        const world = worlds.find((w) => w.id === id)!;
        return { players: [{ id }], score: Math.round(world.strength * (50_000 + 30_000 * random())) };
      }),
    }));
    const outcome = await service.writer.submitRound(wvw, `week ${week + 1}`, at, matches);
    groups = (JSON.parse(outcome.body) as { groups: string[][] }).groups;
  }

  await seedDemoTickets(tickets, random, now);
  return true;
}

/** A few waiting tickets in the 6v6 queue (fewer than one match's worth, so they stay waiting), unless it has some. */
async function seedDemoTickets(tickets: TicketStore, random: () => number, now: number): Promise<void> {
  if ((await tickets.summary('ranked-6v6')).figures.waiting > 0) return;
  const regions = ['eu', 'na', 'asia'];
  for (let i = 0; i < 7; i++) {
    const region = regions[i % 3]!;
    const id = `demo-ticket-${i + 1}-${now.toString(36)}`;
    const at = now - Math.round(random() * 90_000);
    await tickets.add({
      id,
      ladder: 'ranked-6v6',
      status: 'waiting',
      createdAt: at,
      ticket: {
        id,
        at: at / 1000,
        players: [
          { id: `p${i * 7 + 1}`, percentile: 10 + i * 12, pings: { [region]: 30 + i * 5, eu: region === 'eu' ? 30 : 140 }, filter: { within: 5, strict: true, maxPing: 80 } },
        ],
      },
    });
  }
}
