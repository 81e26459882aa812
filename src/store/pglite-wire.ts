/**
 * The messages between the main thread and the PGlite worker thread
 * (src/store/pglite-thread.ts, src/store/pglite-host.ts): plain data only.
 */

export interface ThreadStartData {
  /** PGlite's data directory. */
  pgDir: string;
  /** Server settings added to PGlite's defaults (`-c name=value` pairs). */
  startParams: string[];
}

export type ThreadRequest =
  | { id: number; op: 'query'; sql: string; params: unknown[]; tx?: number }
  | { id: number; op: 'exec'; sql: string; tx?: number }
  | { id: number; op: 'begin' }
  | { id: number; op: 'commit' | 'rollback'; tx: number }
  | { id: number; op: 'close' };

/** A driver error as data: its message and the fields of PostgreSQL's error report. */
export interface WireError {
  message: string;
  name: string;
  code?: string;
  severity?: string;
  detail?: string;
  hint?: string;
  position?: string;
  schema?: string;
  table?: string;
  column?: string;
  constraint?: string;
  routine?: string;
}

/** Id 0 is the thread's own: ready (rows) or failed to open (error). */
export type ThreadReply = { id: number; rows: unknown[] } | { id: number; tx: number } | { id: number; error: WireError };
