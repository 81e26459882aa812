// Thin client for the Ladder JSON API (every operation is described at /docs on the server, and in docs/SERVICE.md).
const base = document.querySelector('meta[name="ladder-api-base"]')?.content ?? '';
const KEY_STORAGE = 'ladder.apiKey';

/** An API error with the service's code and, when given, the offending field. */
export class ApiError extends Error {
  constructor(status, body) {
    const detail = body?.error ?? {};
    super(detail.message ?? `HTTP ${status}`);
    this.status = status;
    this.code = detail.code ?? 'http_error';
    this.field = detail.field;
  }
}

// When storage is disabled the key lasts until reload only.
let memoryKey = '';
/** The saved key the service answered 401 to; no longer sent until the key changes. */
let rejectedKey = '';
/** The saved key the service answered 403 to on a write: it reads but cannot write. */
let readOnlyKey = '';
/** The saved key the service answered 403 to on an admin read (the integrity report): not an admin key. */
let notAdminKey = '';

export function apiKey() {
  try {
    return sessionStorage.getItem(KEY_STORAGE) ?? '';
  } catch {
    return memoryKey;
  }
}

export function setApiKey(key) {
  memoryKey = key;
  rejectedKey = '';
  readOnlyKey = '';
  notAdminKey = '';
  try {
    if (key) sessionStorage.setItem(KEY_STORAGE, key);
    else sessionStorage.removeItem(KEY_STORAGE);
  } catch {
    // Storage can be disabled; memoryKey keeps the key for this page.
  }
}

/** True when the saved key was refused by the service (wrong, expired or revoked). */
export function apiKeyRejected() {
  const key = apiKey();
  return key !== '' && key === rejectedKey;
}

/**
 * Whether to offer write actions (voiding a match): a key is saved, the
 * service has not refused it, and it has not answered a write with 403. The
 * service has no "which scopes has my key" call, so a key without the
 * correct scope learns it on its first void, which the service refuses without changing anything.
 */
export function canOfferWrites() {
  const key = apiKey();
  return key !== '' && key !== rejectedKey && key !== readOnlyKey;
}

/**
 * Whether to offer admin pages (the integrity report): a key is saved, the
 * service has not refused it, and it has not answered an admin read with 403.
 * As for writes, a key that is not an admin's learns it on its first try.
 */
export function canOfferAdmin() {
  const key = apiKey();
  return key !== '' && key !== rejectedKey && key !== notAdminKey;
}

/** The key to send: the saved one, unless the service already refused it. */
function usableKey() {
  const key = apiKey();
  return key && key !== rejectedKey ? key : '';
}

function headers(key, extra = {}) {
  return key ? { ...extra, authorization: `Bearer ${key}` } : extra;
}

async function parse(response) {
  const text = await response.text();
  let body;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  if (!response.ok) throw new ApiError(response.status, body);
  return body;
}

/**
 * One call with the saved key. A 401 to a request that carried a key means the
 * key itself is wrong (the service refuses an invalid key on every route, public
 * ones included): the key is marked rejected, `ladder:key-rejected` is fired on
 * window so the page can say so, and a read (or the pure performance
 * calculation) is retried without it, which public ladders answer. A write
 * (`write: true`) is never retried: it fails with the 401, and a 403 marks the
 * key as one that cannot write (see canOfferWrites).
 */
async function call(url, init, { write = false, admin = false } = {}) {
  const key = usableKey();
  if (write && !key) throw new ApiError(401, { error: { code: 'unauthorized', message: 'this needs an API key with the correct scope' } });
  const response = await fetch(url, { ...init, headers: headers(key, init.headers) });
  if (write && response.status === 403 && key) readOnlyKey = key;
  if (admin && response.status === 403 && key) notAdminKey = key;
  if (response.status !== 401 || !key) return parse(response);
  if (apiKey() === key && rejectedKey !== key) {
    rejectedKey = key;
    window.dispatchEvent(new CustomEvent('ladder:key-rejected'));
  }
  if (write) return parse(response);
  await response.body?.cancel();
  return parse(await fetch(url, { ...init, headers: headers('', init.headers) }));
}

/** Builds `/v1/...` with query parameters, skipping empty ones. */
export function apiUrl(path, query = {}) {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value !== undefined && value !== null && value !== '') params.set(name, String(value));
  }
  const qs = params.toString();
  return `${base}/v1${path}${qs ? `?${qs}` : ''}`;
}

export async function get(path, query, init = {}) {
  return call(apiUrl(path, query), { signal: init.signal }, { admin: init.admin ?? false });
}

export async function post(path, body, init = {}) {
  return call(
    apiUrl(path),
    {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: init.signal,
    },
    { write: init.write ?? false },
  );
}

export const enc = encodeURIComponent;

export const api = {
  systems: (init) => get('/systems', {}, init),
  ladders: (init) => get('/ladders', {}, init),
  ladder: (id, init) => get(`/ladders/${enc(id)}`, {}, init),
  leaderboard: (id, query, init) => get(`/ladders/${enc(id)}/leaderboard`, query, init),
  player: (id, player, init) => get(`/ladders/${enc(id)}/players/${enc(player)}`, {}, init),
  history: (id, player, query, init) => get(`/ladders/${enc(id)}/players/${enc(player)}/history`, query, init),
  matches: (id, query, init) => get(`/ladders/${enc(id)}/matches`, query, init),
  rounds: (id, init) => get(`/ladders/${enc(id)}/rounds`, {}, init),
  queue: (id, init) => get(`/ladders/${enc(id)}/queue`, {}, init),
  seasons: (id, init) => get(`/ladders/${enc(id)}/seasons`, {}, init),
  seasonLeaderboard: (id, season, query, init) => get(`/ladders/${enc(id)}/seasons/${enc(season)}/leaderboard`, query, init),
  seasonPlayer: (id, season, player, init) => get(`/ladders/${enc(id)}/seasons/${enc(season)}/players/${enc(player)}`, {}, init),
  /** Voids a match (correct scope): { match, changed, rerated, players: [{ id, before, after }] }. */
  voidMatch: (id, match, reason, init = {}) => post(`/ladders/${enc(id)}/matches/${enc(match)}/void`, { reason }, { ...init, write: true }),
  /** The integrity report (admin scope): { matches, players, quitRate, tested, entries }, most suspicious first. */
  integrity: (id, query, init = {}) => get(`/ladders/${enc(id)}/reports/integrity`, query, { ...init, admin: true }),
  performance: (body, init) => post('/performance', body, init),
  assignmentsUrl: (id) => apiUrl(`/ladders/${enc(id)}/assignments`),
};
