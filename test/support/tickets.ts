import type { Ticket } from 'ladder-core/matchmaking';

export interface SoloOptions {
  within?: number;
  strict?: boolean;
  maxPing?: number;
  pings?: Record<string, number>;
  rating?: number;
}

/** A one-player ticket: player `${id}-p`, eu 30 ms, filter ±10 loose, maxPing 100 unless told. */
export function solo(id: string, at: number, percentile: number, options: SoloOptions = {}): Ticket {
  return {
    id,
    at,
    players: [
      {
        id: `${id}-p`,
        percentile,
        ...(options.rating === undefined ? {} : { rating: options.rating }),
        pings: options.pings ?? { eu: 30 },
        filter: { within: options.within ?? 10, strict: options.strict ?? false, maxPing: options.maxPing ?? 100 },
      },
    ],
  };
}
