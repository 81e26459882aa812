// Thin client for the Ladder JSON API (see docs/API or /docs on the server).
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

export function apiKey() {
  try {
    return sessionStorage.getItem(KEY_STORAGE) ?? '';
  } catch {
    return '';
  }
}

export function setApiKey(key) {
  try {
    if (key) sessionStorage.setItem(KEY_STORAGE, key);
    else sessionStorage.removeItem(KEY_STORAGE);
  } catch {
    // Storage can be disabled; the key then lasts until reload only.
  }
}

function headers(extra = {}) {
  const key = apiKey();
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
  return parse(await fetch(apiUrl(path, query), { headers: headers(), signal: init.signal }));
}

export async function post(path, body, init = {}) {
  return parse(
    await fetch(apiUrl(path), {
      method: 'POST',
      headers: headers({ 'content-type': 'application/json' }),
      body: JSON.stringify(body),
      signal: init.signal,
    }),
  );
}

export const enc = encodeURIComponent;

export const api = {
  ladders: (init) => get('/ladders', {}, init),
  ladder: (id, init) => get(`/ladders/${enc(id)}`, {}, init),
  leaderboard: (id, query, init) => get(`/ladders/${enc(id)}/leaderboard`, query, init),
  player: (id, player, init) => get(`/ladders/${enc(id)}/players/${enc(player)}`, {}, init),
  history: (id, player, query, init) => get(`/ladders/${enc(id)}/players/${enc(player)}/history`, query, init),
  matches: (id, query, init) => get(`/ladders/${enc(id)}/matches`, query, init),
  rounds: (id, init) => get(`/ladders/${enc(id)}/rounds`, {}, init),
  queue: (id, init) => get(`/ladders/${enc(id)}/queue`, {}, init),
  performance: (body, init) => post('/performance', body, init),
  assignmentsUrl: (id) => apiUrl(`/ladders/${enc(id)}/assignments`),
};
