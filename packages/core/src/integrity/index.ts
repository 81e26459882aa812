/** Integrity: a pure report of pairs who meet too often with results that alternate or never vary, and of players whose quits or results stand out. */
export {
  INTEGRITY_DEFAULTS,
  type IntegrityEntry,
  type IntegrityOptions,
  type IntegrityReport,
  integrityReport,
  type PairEntry,
  type QuitEntry,
  type ResultsEntry,
} from './report.js';
export { binomialTail, poissonUpper, runsUpper } from './stats.js';
