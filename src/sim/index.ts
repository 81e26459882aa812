/** Simulation: synthetic queues and the matchmaking simulator. */
export { DEFAULT_REGIONS, pickWeighted, pingsFrom, seededRandom, syntheticQueue, type SyntheticQueueOptions } from './tickets.js';
export { errorCurveSvg, quantiles, type Quantiles, simulate, type SimulationOptions, type SimulationReport } from './simulate.js';
