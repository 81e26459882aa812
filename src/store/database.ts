/**
 * One PostgreSQL interface over two drivers: embedded PGlite (a data
 * directory, one process) and a real server through `pg.Pool`. Both run the
 * same SQL text with `$1..$n` parameters; nothing is ever interpolated.
 */
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { InvalidInputError, LadderError } from 'ladder-core/core/errors.js';
import { classifyDatabaseError, DatabaseReadStoppedError, QUERY_CANCELED } from './database-errors.js';
import { ReadGate, type ReadGateOptions } from './read-gate.js';

/** Something that runs one statement: the database itself or an open transaction. */
export interface Queryable {
  /**
   * Runs one parameterised statement and returns its rows. `options.name`
   * makes it a prepared statement on PostgreSQL (parsed and planned once per
   * connection; the same name must always carry the same SQL text).
   */
  query<Row = Record<string, unknown>>(sql: string, params?: readonly unknown[], options?: QueryOptions): Promise<Row[]>;
  /** Runs a script of several statements without parameters (migrations only). */
  exec(sql: string): Promise<void>;
}

export interface QueryOptions {
  /** Name of the prepared statement (PostgreSQL); ignored by PGlite. */
  name?: string;
}

/**
 * The same statements, with driver errors turned into DatabaseRejectedError
 * or DatabaseUnavailableError (database-errors.ts), so no caller ever sees
 * or parses a driver's message.
 */
function classified(target: Queryable): Queryable {
  return {
    query: <Row>(sql: string, params?: readonly unknown[], options?: QueryOptions) =>
      target.query<Row>(sql, params, options).catch((error: unknown) => {
        throw classifyDatabaseError(error);
      }),
    exec: (sql: string) =>
      target.exec(sql).catch((error: unknown) => {
        throw classifyDatabaseError(error);
      }),
  };
}

/** Answers when the database can run a statement; rejects with DatabaseUnavailableError otherwise. */
export async function ping(db: Queryable): Promise<void> {
  await db.query('SELECT 1');
}

/** How one read is run (`Database.read`). */
export interface ReadOptions {
  /**
   * Aborted when whoever asked for the read no longer wants it (the HTTP
   * client went away): a statement not yet sent is not sent, and one running
   * on PostgreSQL is cancelled. Either way the read rejects with
   * DatabaseReadStoppedError ('cancelled').
   */
  signal?: AbortSignal;
}

/** The default statement timeout of reads on PostgreSQL, in milliseconds. */
export const DEFAULT_READ_TIMEOUT_MS = 5_000;
/** The default number of PostgreSQL connections reads may hold at once. */
export const DEFAULT_READ_POOL_SIZE = 4;

/** The read was given up on before its next statement: that statement is not sent. */
function throwIfCancelled(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new DatabaseReadStoppedError('cancelled', undefined);
}

export interface Database extends Queryable {
  readonly kind: 'pglite' | 'postgres';
  /**
   * Runs the statements of one read that anyone may ask for (lists, pages,
   * lookups of the public API), never a write. On PostgreSQL they run on
   * connections of their own (at most `readPoolSize`, each with the read
   * statement timeout), so reads can neither hold the connections writes
   * need nor run longer than the timeout (DatabaseReadStoppedError
   * 'timeout'); `options.signal` cancels them. PGlite runs every statement
   * on the process's one thread and has no timeout: its reads are bounded by
   * what they may ask for (capped offsets, keyset cursors), and a given-up
   * read sends no further statement.
   */
  read<T>(work: (db: Queryable) => Promise<T>, options?: ReadOptions): Promise<T>;
  /** Runs `work` in one transaction: committed when it resolves, rolled back when it throws. */
  transaction<T>(work: (tx: Queryable) => Promise<T>): Promise<T>;
  /**
   * Statements run one after another, in the order issued, on one connection
   * kept for this purpose (autocommit: never BEGIN on it). Statements issued
   * before the previous one answered wait in Ladder's own queue (never the
   * driver's, which pg deprecates) and go out the moment it answers. PGlite
   * has one connection anyway.
   */
  readonly ordered: Queryable;
  close(): Promise<void>;
}

/**
 * Arbitrary constant naming Ladder's migration lock among PostgreSQL's advisory
 * locks (one per database, whatever the schema): whoever creates a schema,
 * the migrations table or runs a migration holds it.
 */
export const MIGRATION_LOCK = 715_120_501;

/** The data directory is held by another live process. */
export class DataDirectoryLockedError extends LadderError {
  override name = 'DataDirectoryLockedError';
}

/** int8 (count(*), epoch milliseconds, sequence numbers) as a JS number: every value Ladder stores is far below 2^53. */
const INT8_OID = 20;
const parseInt8 = (value: string): number => Number(value);

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Takes `<dir>/ladder.lock` exclusively (O_EXCL create) and writes our pid in
 * it. A lock left by a process that no longer exists (killed, crashed) is
 * stale and taken over; a live holder is refused, so two processes never
 * open the same PGlite directory. Returns the release function.
 */
export function lockDataDirectory(dir: string): () => void {
  mkdirSync(dir, { recursive: true });
  const path = join(dir, 'ladder.lock');
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const fd = openSync(path, 'wx');
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return () => {
        try {
          if (readFileSync(path, 'utf8').trim() === String(process.pid)) unlinkSync(path);
        } catch {
          // Already gone: nothing to release.
        }
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      let holder = NaN;
      try {
        holder = Number.parseInt(readFileSync(path, 'utf8').trim(), 10);
      } catch {
        // Vanished between open and read: try again.
        continue;
      }
      if (Number.isInteger(holder) && holder > 0 && holder !== process.pid && isAlive(holder)) {
        throw new DataDirectoryLockedError(`data directory ${resolve(dir)} is in use by process ${holder} (lock file ${path}); stop it or use another --data directory`);
      }
      // Stale lock from a dead process (or garbage): remove it and retry the exclusive create.
      try {
        unlinkSync(path);
      } catch {
        // Someone else removed it first; the retry decides who wins.
      }
    }
  }
  throw new DataDirectoryLockedError(`could not take the lock ${path}`);
}

/**
 * Counts the statements and transactions in flight other than public reads,
 * and lets a read's next statement wait until there are none (or `maxWaitMs`
 * has passed): on PGlite's one connection, writes go first.
 */
class WritesFirst {
  private inFlight = 0;
  /** Statements and transactions other than reads sent so far. */
  statements = 0;
  private waiting: Array<() => void> = [];
  constructor(private readonly maxWaitMs: number) {}

  during<T>(work: Promise<T>): Promise<T> {
    this.inFlight++;
    this.statements++;
    return work.finally(() => {
      if (--this.inFlight > 0) return;
      const waiting = this.waiting;
      this.waiting = [];
      for (const wake of waiting) wake();
    });
  }

  track(target: Queryable): Queryable {
    return {
      query: <Row>(sql: string, params?: readonly unknown[], options?: QueryOptions) => this.during(target.query<Row>(sql, params, options)),
      exec: (sql: string) => this.during(target.exec(sql)),
    };
  }

  /** Resolves when no write is in flight, or after `maxWaitMs`. */
  async turn(): Promise<void> {
    if (this.inFlight === 0 || this.maxWaitMs <= 0) return;
    let timer: NodeJS.Timeout | undefined;
    let wake!: () => void;
    await new Promise<void>((resolve) => {
      wake = resolve;
      this.waiting.push(wake);
      timer = setTimeout(resolve, this.maxWaitMs);
    });
    clearTimeout(timer);
    // Gone from the line whichever came first: under writes that never pause, a line of timed-out waiters would only grow.
    const at = this.waiting.indexOf(wake);
    if (at >= 0) this.waiting.splice(at, 1);
  }
}

/** How embedded PGlite is opened (`openPglite`). */
export interface PgliteOptions extends ReadGateOptions {
  /**
   * Longest a public read's statement waits for the writes in flight to end
   * before it is sent anyway, in ms (writes go first on PGlite's one
   * connection; 0 sends reads at once). @default 25
   */
  readYieldMs?: number;
  /** Milliseconds between the ANALYZE runs that keep the planner's statistics current, when something was written (0: only at open). @default 600000 */
  analyzeEveryMs?: number;
  /**
   * Run PGlite in a worker thread (src/store/pglite-thread.ts), so its
   * statements never run on the caller's event loop; `false` runs it on the
   * calling thread (one process-wide thread fewer, each statement a message
   * round trip cheaper; for tools with no other clients to serve).
   * @default true
   */
  thread?: boolean;
  /**
   * PGlite's buffer cache (`shared_buffers`) in MB, a whole number from 1 to
   * 1024. Its pages count in the process's resident memory once touched: at
   * PGlite's default of 128 MB about 110 MB of it (docs/BENCHMARKS.md,
   * "whr-start"). A smaller cache suits an instance with a memory budget; a
   * read that misses it is served from the files, which the operating system
   * caches. @default PGlite's (128)
   */
  sharedBuffersMb?: number;
}

/** Opens embedded PGlite in `dataDir` (created if missing), holding the directory lock. */
export async function openPglite(dataDir: string, options: PgliteOptions = {}): Promise<Database> {
  const buffers = options.sharedBuffersMb;
  if (buffers !== undefined && !(Number.isInteger(buffers) && buffers >= 1 && buffers <= 1024)) {
    throw new InvalidInputError(`sharedBuffersMb must be a whole number of MB from 1 to 1024 (got ${buffers})`, { field: 'sharedBuffersMb' });
  }
  const release = lockDataDirectory(dataDir);
  try {
    const pgDir = join(dataDir, 'pgdata');
    if (!existsSync(pgDir)) mkdirSync(pgDir, { recursive: true });
    // PGlite never syncs its files (it starts PostgreSQL with -F, and its file layer issues no sync call),
    // so zero-filling each new 16 MB WAL segment to reserve its space buys nothing; it stalled the whole
    // process (PGlite runs in it) once a segment: 6v6 p99 at 64 in flight 63–70 ms with it, 32–40 without.
    const startParams = ['-c', 'wal_init_zero=off', ...(buffers !== undefined ? ['-c', `shared_buffers=${buffers}MB`] : [])];
    const engine = options.thread === false ? await inProcessPglite(pgDir, startParams) : await threadPglite(pgDir, startParams);
    // Public reads take turns (src/store/read-gate.ts): a crowd of readers cannot fill PGlite's one queue in front of the writers.
    const readGate = new ReadGate(options);
    // Writers first: PGlite runs one statement at a time, in the order sent, so a read statement sent while
    // a write waits would run before the write's next one. A read's statement is held back while any other
    // statement or transaction is in flight, but at most `readYieldMs`, so steady writes never starve reads.
    const priority = new WritesFirst(options.readYieldMs ?? 25);
    const base = priority.track(classified(engine.db));
    // PGlite runs no autovacuum (a single-user server has no background workers), so its planner never
    // gets statistics unless asked: without them it sorted a 100,000-match ladder to serve a page at offset
    // 500 (60–90 ms a page; 2–4 ms with statistics). ANALYZE samples at most 30,000 rows a table, so it
    // costs a bounded few hundred ms: at open, then every `analyzeEveryMs` when something was written.
    await engine.db.exec('ANALYZE');
    const analyzeEveryMs = options.analyzeEveryMs ?? 600_000;
    let analyzedAt = priority.statements;
    const analyzer =
      analyzeEveryMs > 0
        ? setInterval(() => {
            if (priority.statements === analyzedAt) return;
            analyzedAt = priority.statements;
            base.exec('ANALYZE').catch(() => {});
          }, analyzeEveryMs)
        : undefined;
    analyzer?.unref();
    let closed = false;
    return {
      kind: 'pglite',
      query: base.query,
      exec: base.exec,
      ordered: base,
      // No statement timeout: PostgreSQL's runs on a timer signal that PGlite's single thread never takes
      // while a statement runs (measured: SET statement_timeout = 100 stops nothing). What bounds a read
      // here is what it may ask for; it runs on PGlite's own thread, not on the event loop.
      read: async (work, readOptions = {}) => {
        const { signal } = readOptions;
        throwIfCancelled(signal);
        const leave = await readGate.enter(signal);
        try {
          const reader = classified(engine.db);
          return await work({
            query: async <Row>(sql: string, params?: readonly unknown[], queryOptions?: QueryOptions) => {
              await priority.turn();
              throwIfCancelled(signal);
              return reader.query<Row>(sql, params, queryOptions);
            },
            exec: async (sql: string) => {
              await priority.turn();
              throwIfCancelled(signal);
              return reader.exec(sql);
            },
          });
        } finally {
          leave();
        }
      },
      transaction: (work) =>
        priority.during(
          engine
            .transaction((tx) => work(classified(tx)))
            .catch((error: unknown) => {
              throw classifyDatabaseError(error);
            }),
        ),
      close: async () => {
        if (closed) return;
        closed = true;
        clearInterval(analyzer);
        try {
          await engine.close();
        } finally {
          release();
        }
      },
    };
  } catch (error) {
    release();
    throw error;
  }
}

/** PGlite behind the three things `openPglite` needs of it, wherever it runs. */
interface PgliteEngine {
  db: Queryable;
  transaction<T>(work: (tx: Queryable) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/** PGlite on its own worker thread. */
async function threadPglite(pgDir: string, startParams: string[]): Promise<PgliteEngine> {
  const { PgliteThread } = await import('./pglite-host.js');
  if (!existsSync(join(pgDir, 'PG_VERSION'))) {
    // A new data directory: PGlite creates the cluster (initdb) on a thread of its own, which is then stopped.
    // A WebAssembly memory never shrinks, and initdb's leaves the thread that ran it about 400 MB larger for the
    // life of the process (810 MB resident against 430 MB after a two-step open, measured on 100,000 rows);
    // stopping that thread gives it back, and the database opens again on a fresh one.
    const creator = await PgliteThread.open({ pgDir, startParams });
    await creator.close();
  }
  const thread = await PgliteThread.open({ pgDir, startParams });
  const on = (tx: number | undefined): Queryable => ({
    query: async <Row>(sql: string, params: readonly unknown[] = []) => (await thread.query(sql, params, tx)) as Row[],
    exec: (sql: string) => thread.exec(sql, tx),
  });
  return {
    db: on(undefined),
    transaction: async (work) => {
      const tx = await thread.begin();
      let result: Awaited<ReturnType<typeof work>>;
      try {
        result = await work(on(tx));
      } catch (error) {
        await thread.end(tx, 'rollback').catch(() => {});
        throw error;
      }
      await thread.end(tx, 'commit');
      return result;
    },
    close: () => thread.close(),
  };
}

/** PGlite on the calling thread. */
async function inProcessPglite(pgDir: string, startParams: string[]): Promise<PgliteEngine> {
  const { PGlite } = await import('@electric-sql/pglite');
  const pg = await PGlite.create(pgDir, { parsers: { [INT8_OID]: parseInt8 }, startParams: [...PGlite.defaultStartParams, ...startParams] });
  type Tx = { query: (sql: string, params?: unknown[]) => Promise<{ rows: unknown[] }>; exec: (sql: string) => Promise<unknown> };
  const wrap = (target: Tx): Queryable => ({
    query: async <Row>(sql: string, params: readonly unknown[] = []) => (await target.query(sql, [...params])).rows as Row[],
    exec: async (sql: string) => {
      await target.exec(sql);
    },
  });
  return {
    db: wrap(pg as unknown as Tx),
    transaction: (work) => pg.transaction((tx) => work(wrap(tx as unknown as Tx))),
    close: () => pg.close(),
  };
}

export interface PostgresOptions {
  /** Connection string, e.g. postgres://user@host:5432/db. */
  url: string;
  /**
   * Schema to create (if missing) and use as the search path; tests use a
   * fresh one each so they never collide. @default the server's default (public)
   */
  schema?: string;
  /** Pool size. @default 10 */
  max?: number;
  /** Statement timeout of reads (`Database.read`), in milliseconds. @default DEFAULT_READ_TIMEOUT_MS */
  readTimeoutMs?: number;
  /** Connections reads may hold at once, besides `max`. @default DEFAULT_READ_POOL_SIZE */
  readPoolSize?: number;
  /** Reads that may wait for a read connection; past that a read is refused (503). @default 32 */
  readQueue?: number;
  /** A read whose client left is cancelled if its statement still runs this long after. @default 200 */
  readCancelGraceMs?: number;
}

/** Opens a pool on a real PostgreSQL server. */
export async function openPostgres(options: PostgresOptions): Promise<Database> {
  const pg = await import('pg');
  const { Pool, types } = pg.default;
  if (options.schema !== undefined && !/^[a-z_][a-z0-9_]{0,62}$/.test(options.schema)) {
    throw new LadderError(`schema name must be lower-case letters, digits and underscores, got ${JSON.stringify(options.schema)}`);
  }
  const parsers = {
    getTypeParser: (oid: number, format?: 'text' | 'binary') => (oid === INT8_OID ? parseInt8 : types.getTypeParser(oid, format as 'text')),
  };
  if (options.schema !== undefined) {
    // The name is checked above; identifiers cannot be parameters. Under the migration lock: two instances
    // running CREATE SCHEMA IF NOT EXISTS at once can both miss the schema and one fails (23505).
    const setup = new pg.default.Client({ connectionString: options.url });
    try {
      await setup.connect();
      await setup.query('BEGIN');
      await setup.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
      await setup.query(`CREATE SCHEMA IF NOT EXISTS ${options.schema}`);
      await setup.query('COMMIT');
    } catch (error) {
      throw classifyDatabaseError(error);
    } finally {
      await setup.end().catch(() => {});
    }
  }
  const pool = new Pool({
    connectionString: options.url,
    max: options.max ?? 10,
    types: parsers as never,
    ...(options.schema !== undefined ? { options: `-c search_path=${options.schema}` } : {}),
  });
  // An idle client losing its connection must not crash the process.
  pool.on('error', () => {});
  const readTimeoutMs = options.readTimeoutMs ?? DEFAULT_READ_TIMEOUT_MS;
  if (!Number.isInteger(readTimeoutMs) || readTimeoutMs < 1) throw new LadderError(`readTimeoutMs must be a positive whole number of milliseconds, got ${readTimeoutMs}`);
  // Reads get a pool of their own: however many readers there are, they wait for these connections and
  // never for the ones writes, corrections and /healthz use. Its connections start with the read statement
  // timeout as a session setting (a startup parameter: no extra round trip per read, and no transaction
  // around a read), so a write never runs under it.
  const readGate = new ReadGate({ concurrency: options.readPoolSize ?? DEFAULT_READ_POOL_SIZE, queue: options.readQueue ?? 32 });
  const cancelGraceMs = options.readCancelGraceMs ?? 200;
  const readPool = new Pool({
    connectionString: options.url,
    max: options.readPoolSize ?? DEFAULT_READ_POOL_SIZE,
    types: parsers as never,
    statement_timeout: readTimeoutMs,
    ...(options.schema !== undefined ? { options: `-c search_path=${options.schema}` } : {}),
  });
  readPool.on('error', () => {});
  type Client = { query: (config: { text: string; values: unknown[]; name?: string }) => Promise<{ rows: unknown[] }> } & { query: (sql: string) => Promise<unknown> };
  const onClient = (client: Client): Queryable => ({
    query: async <Row>(sql: string, params: readonly unknown[] = [], queryOptions: QueryOptions = {}) =>
      (await client.query({ text: sql, values: [...params], ...(queryOptions.name !== undefined ? { name: queryOptions.name } : {}) })).rows as Row[],
    exec: async (sql: string) => {
      await client.query(sql);
    },
  });
  let closed = false;
  let pinned: Promise<import('pg').PoolClient> | undefined;
  const pinnedClient = () => {
    if (!pinned) {
      const connecting = pool.connect();
      pinned = connecting;
      connecting.then(
        (client) => {
          client.on('error', () => {
            // The connection broke: queued statements fail (their batches get 503); the next one reconnects.
            if (pinned === connecting) pinned = undefined;
            client.release(true);
          });
        },
        () => {
          if (pinned === connecting) pinned = undefined;
        },
      );
    }
    return pinned;
  };
  // The order is kept here, not in pg's client: a statement is handed to the connection only once the
  // one before it has answered. pg 8 would queue a second query itself, but that is deprecated ("Calling
  // client.query() when the client is already executing a query") and pg 9 removes it. The next statement
  // still leaves the moment the previous answer is read: the same timing as pg's own queue.
  let tail: Promise<unknown> = Promise.resolve();
  const inOrder = <T>(run: (client: import('pg').PoolClient) => Promise<T>): Promise<T> => {
    const next = tail.then(async () => run(await pinnedClient()));
    tail = next.catch(() => {});
    return next;
  };
  const ordered: Queryable = classified({
    query: <Row>(sql: string, params: readonly unknown[] = [], queryOptions: QueryOptions = {}) =>
      inOrder(async (client) => (await client.query({ text: sql, values: [...params], ...(queryOptions.name !== undefined ? { name: queryOptions.name } : {}) })).rows as Row[]),
    exec: (sql: string) =>
      inOrder(async (client) => {
        await client.query(sql);
      }),
  });
  const pooled = classified({
    query: async <Row>(sql: string, params: readonly unknown[] = [], queryOptions: QueryOptions = {}) =>
      (await pool.query({ text: sql, values: [...params], ...(queryOptions.name !== undefined ? { name: queryOptions.name } : {}) })).rows as Row[],
    exec: async (sql: string) => {
      await pool.query(sql);
    },
  });
  /** A driver error of a read: a cancelled statement is the timeout's doing unless the read was given up on. */
  const readError = (error: unknown, signal: AbortSignal | undefined): unknown => {
    if ((error as { code?: unknown } | null)?.code === QUERY_CANCELED) {
      return new DatabaseReadStoppedError(signal?.aborted ? 'cancelled' : 'timeout', signal?.aborted ? undefined : readTimeoutMs, { cause: error });
    }
    return classifyDatabaseError(error);
  };
  const read = async <T>(work: (db: Queryable) => Promise<T>, readOptions: ReadOptions = {}): Promise<T> => {
    const { signal } = readOptions;
    throwIfCancelled(signal);
    // At most readPoolSize reads run and a bounded line waits (src/store/read-gate.ts); a read whose
    // client leaves while in line never takes a connection.
    const leave = await readGate.enter(signal);
    let client: import('pg').PoolClient;
    try {
      client = await readPool.connect();
    } catch (error) {
      leave();
      throw classifyDatabaseError(error);
    }
    let running = 0;
    let cancelling: Promise<unknown> | undefined;
    // The backend running our statement is told to stop it (from a connection of the main pool, which
    // readers never hold). Until that has been sent the connection is not given back, and then it is
    // closed rather than reused, so the cancel can only ever reach a statement of this read.
    // A statement is cancelled only if it is still running a grace period after the client left: bounded
    // pages finish within it, and cancelling each of them would cost a new backend per abandoned request
    // (the connection is closed after a cancel), a churn that itself starves the writers.
    let graceTimer: NodeJS.Timeout | undefined;
    const cancel = () => {
      if (running === 0 || cancelling !== undefined) return;
      const pid = (client as unknown as { processID: number | null }).processID;
      if (pid !== null) cancelling = pool.query('SELECT pg_cancel_backend($1)', [pid]).catch(() => undefined);
    };
    const onAbort = () => {
      graceTimer = setTimeout(cancel, cancelGraceMs);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      throwIfCancelled(signal);
      return await work({
        query: async <Row>(sql: string, params: readonly unknown[] = [], queryOptions: QueryOptions = {}) => {
          throwIfCancelled(signal);
          running++;
          try {
            return (await client.query({ text: sql, values: [...params], ...(queryOptions.name !== undefined ? { name: queryOptions.name } : {}) })).rows as Row[];
          } catch (error) {
            throw readError(error, signal);
          } finally {
            running--;
          }
        },
        exec: async (sql: string) => {
          throwIfCancelled(signal);
          running++;
          try {
            await client.query(sql);
          } catch (error) {
            throw readError(error, signal);
          } finally {
            running--;
          }
        },
      });
    } finally {
      signal?.removeEventListener('abort', onAbort);
      if (graceTimer !== undefined) clearTimeout(graceTimer);
      if (cancelling !== undefined) {
        await cancelling;
        client.release(true);
      } else client.release();
      leave();
    }
  };
  return {
    kind: 'postgres',
    ordered,
    query: pooled.query,
    exec: pooled.exec,
    read,
    transaction: async (work) => {
      let client: import('pg').PoolClient;
      try {
        client = await pool.connect();
      } catch (error) {
        throw classifyDatabaseError(error);
      }
      let broken = false;
      try {
        await client.query('BEGIN');
        const result = await work(classified(onClient(client as unknown as Client)));
        await client.query('COMMIT');
        return result;
      } catch (error) {
        try {
          await client.query('ROLLBACK');
        } catch {
          broken = true;
        }
        throw classifyDatabaseError(error);
      } finally {
        client.release(broken);
      }
    },
    close: async () => {
      if (closed) return;
      closed = true;
      if (pinned) {
        try {
          (await pinned).release();
        } catch {
          // Never connected: nothing to release.
        }
      }
      await Promise.all([pool.end(), readPool.end()]);
    },
  };
}

/**
 * Drops a schema made for a test or a benchmark run, with everything in it.
 * The name is checked like `PostgresOptions.schema` (identifiers cannot be parameters).
 */
export async function dropSchema(url: string, schema: string): Promise<void> {
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) throw new LadderError(`schema name must be lower-case letters, digits and underscores, got ${JSON.stringify(schema)}`);
  const db = await openPostgres({ url, max: 1 });
  try {
    await db.exec(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  } finally {
    await db.close();
  }
}

export interface OpenDatabaseOptions {
  /** PostgreSQL connection string; when absent, embedded PGlite in `dataDir`. */
  databaseUrl?: string;
  /** @default './ladder-data' */
  dataDir?: string;
  /** Schema for PostgreSQL (see PostgresOptions.schema). */
  schema?: string;
  /** Pool size for PostgreSQL. @default 10 */
  poolSize?: number;
  /** Statement timeout of reads on PostgreSQL (see PostgresOptions.readTimeoutMs). */
  readTimeoutMs?: number;
  /** Connections reads may hold on PostgreSQL (see PostgresOptions.readPoolSize). */
  readPoolSize?: number;
  /** PGlite in a worker thread (see PgliteOptions.thread). @default true */
  pgliteThread?: boolean;
  /** PGlite's buffer cache in MB (see PgliteOptions.sharedBuffersMb). */
  pgliteSharedBuffersMb?: number;
}

export async function openDatabase(options: OpenDatabaseOptions): Promise<Database> {
  if (options.databaseUrl) {
    return openPostgres({ url: options.databaseUrl, schema: options.schema, max: options.poolSize, readTimeoutMs: options.readTimeoutMs, readPoolSize: options.readPoolSize });
  }
  return openPglite(options.dataDir ?? './ladder-data', {
    thread: options.pgliteThread,
    ...(options.pgliteSharedBuffersMb !== undefined ? { sharedBuffersMb: options.pgliteSharedBuffersMb } : {}),
  });
}
