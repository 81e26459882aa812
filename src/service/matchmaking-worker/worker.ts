/**
 * The matchmakers' thread: holds the matchmaking loop's long-lived
 * `Matchmaker`s (one per ladder queue whose lock the instance holds, by the
 * handle the main thread gave each) and answers its requests one at a time,
 * in the order sent. The passes run here, so the main thread's event loop
 * keeps serving requests while a pass over a million tickets runs.
 */
import { parentPort, threadId } from 'node:worker_threads';
import { warmUpMatchmaker } from '../matchmaking-warm-up.js';
import {
  type Answer,
  applyOps,
  countsOf,
  failureData,
  MATCHES_PER_PART,
  type QueueMatchmaker,
  type ReplyMessage,
  type Request,
  type RequestMessage,
  settingsOf,
} from './protocol.js';
import { newQueueMatchmaker, whyOf } from './rule-set-queue.js';

const port = parentPort;
if (port === null) throw new Error('the matchmaking worker runs only as a worker thread');

const matchmakers = new Map<number, QueueMatchmaker>();
/** Parts of each matchmaker's last pass not yet asked for, last part first. */
const unsent = new Map<number, string[]>();

function matchmakerOf(handle: number): QueueMatchmaker {
  const matchmaker = matchmakers.get(handle);
  if (matchmaker === undefined) throw new Error(`no matchmaker ${handle} in the matchmaking worker`);
  return matchmaker;
}

function answer(request: Request): Answer | undefined {
  switch (request.kind) {
    case 'create': {
      const matchmaker = newQueueMatchmaker(request.options);
      matchmakers.set(request.handle, matchmaker);
      return { kind: 'create', settings: settingsOf(matchmaker, threadId) };
    }
    case 'apply': {
      const matchmaker = matchmakerOf(request.handle);
      return { kind: 'apply', results: applyOps(matchmaker, request.ops), counts: countsOf(matchmaker) };
    }
    case 'pass': {
      const matchmaker = matchmakerOf(request.handle);
      const started = performance.now();
      const cpu = process.cpuUsage();
      const result = matchmaker.pass(request.now);
      const used = process.cpuUsage(cpu);
      const ms = performance.now() - started;
      // The first part comes with the answer, the others when asked for (see MATCHES_PER_PART).
      const parts: string[] = [];
      for (let from = MATCHES_PER_PART; from < result.matches.length; from += MATCHES_PER_PART) parts.push(JSON.stringify(result.matches.slice(from, from + MATCHES_PER_PART)));
      parts.reverse();
      if (parts.length > 0) unsent.set(request.handle, parts);
      else unsent.delete(request.handle);
      return {
        kind: 'pass',
        result: {
          matches: result.matches.slice(0, MATCHES_PER_PART),
          backfills: result.backfills,
          ms,
          cpuMs: (used.user + used.system) / 1000,
          ...('why' in result ? { why: result.why } : {}),
        },
        parts: parts.length,
        formed: result.matches.length,
        counts: countsOf(matchmaker),
      };
    }
    case 'part': {
      const part = unsent.get(request.handle)?.pop();
      if (part === undefined) throw new Error(`no part of a pass left for matchmaker ${request.handle}`);
      return { kind: 'part', matches: part };
    }
    case 'backfills':
      return { kind: 'backfills', backfills: matchmakerOf(request.handle).backfills() };
    case 'why':
      return { kind: 'why', reasons: whyOf(matchmakerOf(request.handle), request.ids) };
    case 'dispose':
      matchmakers.delete(request.handle);
      unsent.delete(request.handle);
      return undefined;
    case 'warmUp':
      return { kind: 'warmUp', report: warmUpMatchmaker(request.options) };
  }
}

port.on('message', ({ id, request }: RequestMessage) => {
  let reply: ReplyMessage | undefined;
  try {
    const result = answer(request);
    if (result !== undefined) reply = { id, answer: result };
  } catch (error) {
    reply = { id, failure: failureData(error) };
  }
  if (reply !== undefined) port.postMessage(reply);
});
