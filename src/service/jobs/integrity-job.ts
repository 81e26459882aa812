/**
 * The integrity report as a job: the matches as one JSON array text (parsed
 * here, off the event loop: cloning 200,000 match objects into a worker
 * would cost the event loop more than the text) and the report's options.
 */
import type { Match } from 'ladder-core/core/match.js';
import { type IntegrityOptions, integrityReport, type IntegrityReport } from 'ladder-core/integrity/report.js';

export interface IntegrityJobInput {
  /** A JSON array of matches, as stored. */
  matchesJson: string;
  options: IntegrityOptions;
}

export function integrityJob(input: IntegrityJobInput): IntegrityReport {
  return integrityReport(JSON.parse(input.matchesJson) as Match[], input.options);
}
