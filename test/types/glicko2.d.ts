/** The npm `glicko2` package (a test-only peer) ships no types; the parts the tests call. */
declare module 'glicko2' {
  interface Player {
    getRating(): number;
    getRd(): number;
    getVol(): number;
  }
  class Glicko2 {
    constructor(settings: { tau?: number; rating?: number; rd?: number; vol?: number });
    makePlayer(rating?: number, rd?: number, vol?: number): Player;
    updateRatings(matches: Array<[Player, Player, number]>): void;
  }
  const glicko2: { Glicko2: typeof Glicko2 };
  export default glicko2;
}
