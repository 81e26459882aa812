// The rating systems as the service describes them (GET /v1/systems): each
// one's label, what its number is called and to how many decimals, which
// terms of a rating change are worth a column, whether it is rated in
// rounds. Pages ask here and never name a system themselves.
import { api } from './api.js';

let byName = new Map();
let loading = null;

/** Loads the descriptions once; a failed load is tried again before the next page. */
export function loadSystems() {
  loading ??= api
    .systems()
    .then(({ systems }) => {
      byName = new Map(systems.map((system) => [system.name, system]));
    })
    .catch(() => {
      loading = null;
    });
  return loading;
}

/** What a page may assume of a system the service did not describe: its name, one decimal, no extra columns. */
function fallback(name) {
  return {
    name,
    label: name,
    capabilities: { rounds: false, deviation: false },
    display: { quantity: 'rating', decimals: 1 },
    dashboard: { terms: [], explanation: '', performanceRuns: false },
  };
}

/** The description of the system named `name` (a ladder's `system`). */
export function systemInfo(name) {
  return byName.get(name) ?? fallback(name);
}
