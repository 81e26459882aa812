/**
 * Counts the turns of the calling thread's event loop (one `setImmediate`
 * callback each, so one per check phase) from now until `stop()`: how tests
 * see that long work gave other callers a turn, without timing it.
 */
export function countLoopTurns(): { turns: () => number; stop: () => number } {
  let turns = 0;
  let running = true;
  const spin = () => {
    if (!running) return;
    turns++;
    setImmediate(spin);
  };
  setImmediate(spin);
  return {
    turns: () => turns,
    stop: () => {
      running = false;
      return turns;
    },
  };
}
