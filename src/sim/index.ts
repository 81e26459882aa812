/** Simulation: synthetic queues and the matchmaking simulator. */
export { DEFAULT_REGIONS, pickWeighted, pingsFrom, seededRandom, syntheticQueue, type SyntheticQueueOptions } from 'ladder-core/matchmaking/synthetic-queue.js';
export {
  type CheatOptions,
  errorCurveSvg,
  type InjectedCheaters,
  quantiles,
  type Quantiles,
  simulate,
  simulatedSystem,
  simulatedSystems,
  type SimulationOptions,
  type SimulationReport,
} from './simulate.js';
export { type RuleSetSimulationOptions, type RuleSetSimulationReport, simulateRuleSet } from './rule-set.js';
