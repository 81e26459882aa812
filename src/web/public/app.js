// Hash router: #/ladders, #/ladders/:id, #/ladders/:id/players/:player,
// #/ladders/:id/matches, #/ladders/:id/rounds (also at its first name, /wvw),
// #/ladders/:id/matchmaking, #/ladders/:id/integrity (admins), #/performance.
// Hash routing keeps every page a plain static file: the server needs no
// fallback route and links work when the dashboard is mounted under a prefix.
import { apiKey, apiKeyRejected, setApiKey } from './api.js';
import { loadSystems } from './systems.js';
import { clear, errorBox, h, parseHash, takeNotice } from './ui.js';
import * as laddersPage from './pages/ladders.js';
import * as leaderboardPage from './pages/leaderboard.js';
import * as playerPage from './pages/player.js';
import * as wvwPage from './pages/wvw.js';
import * as matchmakingPage from './pages/matchmaking.js';
import * as matchesPage from './pages/matches.js';
import * as performancePage from './pages/performance.js';
import * as integrityPage from './pages/integrity.js';

const routes = [
  { pattern: /^\/?$/, page: laddersPage },
  { pattern: /^\/ladders\/?$/, page: laddersPage },
  { pattern: /^\/ladders\/([^/]+)\/?$/, page: leaderboardPage, names: ['ladder'] },
  { pattern: /^\/ladders\/([^/]+)\/players\/([^/]+)\/?$/, page: playerPage, names: ['ladder', 'player'] },
  { pattern: /^\/ladders\/([^/]+)\/matches\/?$/, page: matchesPage, names: ['ladder'] },
  { pattern: /^\/ladders\/([^/]+)\/(?:rounds|wvw)\/?$/, page: wvwPage, names: ['ladder'] },
  { pattern: /^\/ladders\/([^/]+)\/matchmaking\/?$/, page: matchmakingPage, names: ['ladder'] },
  { pattern: /^\/ladders\/([^/]+)\/integrity\/?$/, page: integrityPage, names: ['ladder'] },
  { pattern: /^\/performance\/?$/, page: performancePage },
];

let current = { controller: null, cleanup: null };
let firstRender = true;

async function render() {
  current.controller?.abort();
  try {
    current.cleanup?.();
  } catch {
    // A page's cleanup failing must not stop the next page.
  }
  const controller = new AbortController();
  current = { controller, cleanup: null };

  const { path, query } = parseHash(location.hash);
  const main = clear(document.getElementById('main'));
  const route = routes.find((candidate) => candidate.pattern.test(path));
  markNav(path);
  if (!route) {
    main.append(h('h1', { tabindex: '-1' }, 'Page not found'), h('p', {}, h('a', { href: '#/ladders' }, 'Back to the ladders')));
    finishNavigation(main);
    return;
  }
  const match = route.pattern.exec(path);
  const params = {};
  (route.names ?? []).forEach((name, index) => {
    params[name] = decodeURIComponent(match[index + 1]);
  });
  main.setAttribute('aria-busy', 'true');
  try {
    // What each rating system is called and how its numbers show (GET /v1/systems), loaded once.
    await loadSystems();
    if (controller.signal.aborted) return;
    const cleanup = await route.page.render(main, { params, query, signal: controller.signal });
    if (controller.signal.aborted) cleanup?.();
    else current.cleanup = cleanup ?? null;
  } catch (error) {
    if (controller.signal.aborted) return;
    if (!main.querySelector('h1')) main.append(h('h1', { tabindex: '-1' }, 'Something went wrong'));
    main.append(errorBox(error));
  } finally {
    if (!controller.signal.aborted) {
      placeNotice(main);
      main.removeAttribute('aria-busy');
      finishNavigation(main);
    }
  }
}

/** A write's answer (ui.js refreshWithNotice) goes under the page's tabs, or its heading. */
function placeNotice(main) {
  const notice = takeNotice();
  if (!notice) return;
  const anchor = main.querySelector('nav.tabs') ?? main.querySelector('h1');
  if (anchor) anchor.after(notice);
  else main.prepend(notice);
}

/**
 * Moves focus to the new heading so keyboard and screen reader users land on
 * the content, or to a write's answer when the render shows one.
 */
function finishNavigation(main) {
  const heading = main.querySelector('h1');
  document.title = heading ? `${heading.textContent} · Ladder` : 'Ladder dashboard';
  const notice = main.querySelector('.write-answer');
  if (notice) {
    firstRender = false;
    notice.setAttribute('tabindex', '-1');
    notice.focus();
    return;
  }
  if (firstRender) {
    firstRender = false;
    return;
  }
  if (heading) {
    heading.setAttribute('tabindex', '-1');
    heading.focus({ preventScroll: false });
  }
  document.getElementById('route-announcer').textContent = document.title;
}

function markNav(path) {
  for (const link of document.querySelectorAll('#nav a')) {
    const target = link.getAttribute('href').slice(1);
    const active = target === '/ladders' ? path === '/' || path.startsWith('/ladders') : path.startsWith(target);
    if (active) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  }
}

function setupApiKeyForm() {
  const form = document.getElementById('api-key-form');
  const input = document.getElementById('api-key');
  input.value = apiKey();
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    setApiKey(input.value.trim());
    // The key is in use: fold the form away, as a menu closes after a choice.
    form.closest('details').open = false;
    showKeyProblem();
    render();
  });
  window.addEventListener('ladder:key-rejected', showKeyProblem);
}

/**
 * Says when the service refused the saved key. The pages keep working: the API
 * client retried the reads without it, so public ladders still show.
 */
function showKeyProblem() {
  const box = clear(document.getElementById('key-problem'));
  if (!apiKeyRejected()) {
    box.hidden = true;
    return;
  }
  const forget = h('button', { type: 'button', id: 'forget-key' }, 'Forget the key');
  forget.addEventListener('click', () => {
    setApiKey('');
    document.getElementById('api-key').value = '';
    showKeyProblem();
    render();
  });
  const replace = h('button', { type: 'button', id: 'replace-key', class: 'secondary' }, 'Enter another key');
  replace.addEventListener('click', () => {
    document.querySelector('details.api-key').open = true;
    const input = document.getElementById('api-key');
    input.select();
    input.focus();
  });
  box.append(
    h(
      'p',
      {},
      h('strong', {}, 'The saved API key is wrong: '),
      'the service refused it (mistyped, expired or revoked). Public ladders are shown without it; private ones need a working key.',
    ),
    h('p', { class: 'actions' }, forget, ' ', replace),
  );
  box.hidden = false;
}

window.addEventListener('hashchange', render);
// A write (voiding a match) asks for the page again, to show what it changed.
window.addEventListener('ladder:refresh', render);
setupApiKeyForm();
render();
