// Small DOM and formatting helpers shared by the pages.
import { apiKey, apiKeyRejected } from './api.js';
import { systemInfo } from './systems.js';

/**
 * Creates an element: h('a', { href: '#/x', class: 'y' }, 'text', child).
 * Attributes starting with "on" become listeners; false/null/undefined are skipped.
 * `style` takes an object of CSS properties, set through the CSSOM
 * (element.style), which the dashboard's Content Security Policy allows; a
 * `style="..."` attribute, or any other on* attribute, would be refused.
 */
export function h(tag, attributes = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes ?? {})) {
    if (value === false || value === null || value === undefined) continue;
    if (name.startsWith('on')) {
      if (typeof value !== 'function') throw new TypeError(`h(): ${name} must be a function, not an attribute`);
      element.addEventListener(name.slice(2), value);
    } else if (name === 'style') {
      if (typeof value !== 'object') throw new TypeError('h(): style must be an object of CSS properties, not an attribute string');
      for (const [property, setting] of Object.entries(value)) {
        if (property.startsWith('--')) element.style.setProperty(property, setting);
        else element.style[property] = setting;
      }
    } else if (name === 'dataset') Object.assign(element.dataset, value);
    else element.setAttribute(name, value === true ? '' : String(value));
  }
  append(element, children);
  return element;
}

function append(parent, children) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(parent, child);
    else parent.append(child instanceof Node ? child : String(child));
  }
}

/**
 * A notice to show at the top of the page after the next render, which this
 * starts (app.js listens for `ladder:refresh`): a write's answer stays on the
 * screen while the page reloads what the write changed.
 */
let pendingNotice = null;

export function refreshWithNotice(node) {
  pendingNotice = node;
  window.dispatchEvent(new CustomEvent('ladder:refresh'));
}

/** The notice waiting for the page just rendered, once. */
export function takeNotice() {
  const node = pendingNotice;
  pendingNotice = null;
  return node;
}

export function clear(element) {
  while (element.firstChild) element.firstChild.remove();
  return element;
}

/** Rating as the API gives it, to the precision the system uses. */
export function formatRating(value, system) {
  if (value === null || value === undefined || Number.isNaN(value)) return '–';
  return value.toFixed(ratingDecimals(system));
}

/** Decimals the system shows its ratings with (team rank holds ranks in cents). */
export function ratingDecimals(system) {
  return systemInfo(system).display.decimals;
}

export function formatNumber(value, digits = 2) {
  if (value === null || value === undefined || Number.isNaN(Number(value))) return '–';
  return Number(value).toFixed(digits);
}

export function formatSigned(value, digits = 2) {
  if (value === null || value === undefined || Number.isNaN(value)) return '–';
  const text = value.toFixed(digits);
  return value > 0 ? `+${text}` : text;
}

export function formatPercent(probability, digits = 1) {
  if (probability === null || probability === undefined || Number.isNaN(probability)) return '–';
  return `${(probability * 100).toFixed(digits)}%`;
}

export function formatDate(iso) {
  if (!iso) return '–';
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return String(iso);
  return date.toISOString().slice(0, 16).replace('T', ' ');
}

export function formatSeconds(seconds) {
  if (seconds === null || seconds === undefined) return '–';
  if (seconds < 60) return `${Math.round(seconds)} s`;
  const minutes = Math.floor(seconds / 60);
  return `${minutes} min ${Math.round(seconds - minutes * 60)} s`;
}

export function systemLabel(system) {
  return systemInfo(system).label;
}

/**
 * A labelled table whose wide content scrolls sideways on a phone instead of the page.
 * `stack: true` turns each row into a card on narrow screens (labels come from the columns);
 * columns marked `optional` are hidden on narrow screens; a column's `short` label
 * replaces its label in the header on narrow screens.
 */
export function table({ caption, columns, rows, id, stack = false }) {
  for (const row of rows) {
    [...row.children].forEach((cell, index) => {
      const column = columns[index];
      if (!column) return;
      cell.dataset.label = column.label;
      if (column.optional) cell.classList.add('optional');
    });
  }
  const headClass = (column) => [column.numeric ? 'num' : '', column.optional ? 'optional' : ''].filter(Boolean).join(' ') || null;
  return h(
    'div',
    { class: 'table-wrap', role: 'region', 'aria-label': caption, tabindex: '0' },
    h(
      'table',
      { id, class: stack ? 'stack-mobile' : null },
      h('caption', {}, caption),
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          columns.map((column) => h('th', { scope: 'col', class: headClass(column) }, headLabel(column))),
        ),
      ),
      h('tbody', {}, rows),
    ),
  );
}

function headLabel(column) {
  if (!column.short) return column.label;
  return [h('span', { class: 'label-long' }, column.label), h('abbr', { class: 'label-short', title: column.label }, column.short)];
}

export function errorMessage(error) {
  if (error?.name === 'AbortError') return null;
  if ((error?.status === 401 || error?.status === 403) && apiKeyRejected()) {
    return `${error.message} — this ladder is not public, and the saved API key was refused; enter a working key under “API key”.`;
  }
  if (error?.status === 401 || error?.status === 403) {
    return `${error.message} — this ladder is not public; enter an API key with read access under “API key”.`;
  }
  // The service answers a private ladder as a missing one to a caller who may not read it.
  if (error?.status === 404 && error.field === 'ladder' && apiKeyRejected()) {
    return `Not found: ${error.message} — a private ladder looks missing without a working key, and the saved API key was refused; enter a working key under “API key”.`;
  }
  if (error?.status === 404 && error.field === 'ladder' && !apiKey()) {
    return `Not found: ${error.message} — if it is a private ladder, enter an API key with read access under “API key”.`;
  }
  if (error?.status === 404) return `Not found: ${error.message}`;
  return error?.message ?? String(error);
}

export function errorBox(error) {
  const message = errorMessage(error);
  return message ? h('p', { class: 'error', role: 'alert' }, message) : null;
}

/** Splits "#/ladders/x?offset=50" into a path and its query parameters. */
export function parseHash(hash) {
  const raw = hash.replace(/^#/, '');
  const [path, search = ''] = raw.split('?');
  return { path: path || '/', query: Object.fromEntries(new URLSearchParams(search)) };
}

/** Builds a hash link, leaving out empty parameters. */
export function hashLink(path, query = {}) {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value !== undefined && value !== null && value !== '') params.set(name, String(value));
  }
  const qs = params.toString();
  return `#${path}${qs ? `?${qs}` : ''}`;
}
